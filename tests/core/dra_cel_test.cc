// The CEL subset of DRA device selectors (deviceshare/dra/cel.h): the
// selectors of our DeviceClasses and examples, HAMi's and NVIDIA's styles,
// every operator and function, and the errors Kubernetes would give.
#include <atomic>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "deviceshare/dra/cel.h"
#include "deviceshare/dra/resource_slice.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace deviceshare::dra {
namespace {

using ::deviceshare::testing::IsOk;
using ::deviceshare::testing::StatusIs;
using ::testing::HasSubstr;

constexpr std::string_view kDriver = "gpu.deviceshare.io";
constexpr int64_t kGi = int64_t{1} << 30;

// A whole H100 as our driver publishes it, in hami-core mode.
Device H100() {
  Device d;
  d.name = "gpu-0";
  d.attributes["uuid"] = DeviceAttribute::String("GPU-0a1b2c3d");
  d.attributes["mode"] = DeviceAttribute::String("hami-core");
  d.attributes["index"] = DeviceAttribute::Int(0);
  d.attributes["mig"] = DeviceAttribute::Bool(false);
  d.attributes["driverVersion"] = DeviceAttribute::Version("550.54.15");
  d.attributes["gpu.deviceshare.io/productName"] =
      DeviceAttribute::String("NVIDIA H100 80GB HBM3");
  d.attributes["resource.kubernetes.io/pcieRoot"] =
      DeviceAttribute::String("pci0000:00");
  d.capacity["memory"] = {80 * kGi, QuantityFormat::kBinary, std::nullopt};
  d.capacity["cores"] = {100, QuantityFormat::kDecimal, std::nullopt};
  return d;
}

absl::StatusOr<bool> Eval(std::string_view expression, const Device& device,
                          std::string_view driver = kDriver) {
  absl::StatusOr<CelProgram> program = CelProgram::Compile(expression);
  if (!program.ok()) return program.status();
  return program->Matches(CelDevice{driver, &device});
}

void ExpectTrue(std::string_view expression, const Device& device,
                std::string_view driver = kDriver) {
  absl::StatusOr<bool> got = Eval(expression, device, driver);
  ASSERT_THAT(got, IsOk()) << expression;
  EXPECT_TRUE(*got) << expression;
}

void ExpectFalse(std::string_view expression, const Device& device,
                 std::string_view driver = kDriver) {
  absl::StatusOr<bool> got = Eval(expression, device, driver);
  ASSERT_THAT(got, IsOk()) << expression;
  EXPECT_FALSE(*got) << expression;
}

absl::Status CompileError(std::string_view expression) {
  return CelProgram::Compile(expression).status();
}

// deploy/dra/deviceclasses.yaml, the `>-` blocks folded as YAML
// folds them.
TEST(DraCelTest, DeviceClassSelectors) {
  Device gpu = H100();
  ExpectTrue(R"(device.driver == "gpu.deviceshare.io")", gpu);
  ExpectFalse(R"(device.driver == "gpu.deviceshare.io")", gpu,
              "gpu.nvidia.com");
  ExpectTrue(
      R"(device.driver == "gpu.deviceshare.io" && device.attributes["gpu.deviceshare.io"].mode == "hami-core")",
      gpu);
  ExpectFalse(
      R"(device.driver == "gpu.deviceshare.io" && device.attributes["gpu.deviceshare.io"].mode == "mps")",
      gpu);
  ExpectFalse(
      R"(device.driver == "gpu.deviceshare.io" && device.attributes["gpu.deviceshare.io"].mode == "mig")",
      gpu);
  gpu.attributes["mode"] = DeviceAttribute::String("mig");
  ExpectTrue(
      R"(device.driver == "gpu.deviceshare.io" && device.attributes["gpu.deviceshare.io"].mode == "mig")",
      gpu);
}

// examples/dra/one-gpu-claim.yaml.
TEST(DraCelTest, ClaimMemorySelector) {
  constexpr std::string_view kSelector =
      R"(device.capacity["gpu.deviceshare.io"].memory.compareTo(quantity("16Gi")) >= 0)";
  Device gpu = H100();
  ExpectTrue(kSelector, gpu);
  gpu.capacity["memory"].value = 16 * kGi;
  ExpectTrue(kSelector, gpu);
  gpu.capacity["memory"].value = 16 * kGi - 1;
  ExpectFalse(kSelector, gpu);
}

TEST(DraCelTest, HamiSelector) {
  Device gpu;
  gpu.attributes["type"] = DeviceAttribute::String("hami-gpu");
  constexpr std::string_view kSelector =
      R"(device.attributes["hami-core-gpu.project-hami.io"].type == "hami-gpu")";
  ExpectTrue(kSelector, gpu, "hami-core-gpu.project-hami.io");
  // Under another driver the bare key is that driver's: the domain is empty.
  EXPECT_THAT(Eval(kSelector, gpu, "gpu.deviceshare.io"),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("no such key: type")));
}

TEST(DraCelTest, NvidiaStyleSelector) {
  constexpr std::string_view kSelector =
      R"(device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0 && device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("535.0.0")))";
  Device gpu;
  gpu.capacity["memory"] = {40 * kGi, QuantityFormat::kBinary, std::nullopt};
  gpu.attributes["driverVersion"] = DeviceAttribute::Version("550.54.15");
  ExpectTrue(kSelector, gpu, "gpu.example.com");
  gpu.attributes["driverVersion"] = DeviceAttribute::Version("535.0.0");
  ExpectFalse(kSelector, gpu, "gpu.example.com");
  gpu.attributes["driverVersion"] = DeviceAttribute::Version("535.0.1");
  ExpectTrue(kSelector, gpu, "gpu.example.com");
  gpu.capacity["memory"].value = 32 * kGi;
  ExpectFalse(kSelector, gpu, "gpu.example.com");
}

TEST(DraCelTest, AttributeLookupByDomain) {
  Device gpu = H100();
  // Bare keys and keys qualified with the driver's domain are both the
  // driver's.
  ExpectTrue(
      R"(device.attributes["gpu.deviceshare.io"].uuid == "GPU-0a1b2c3d")", gpu);
  ExpectTrue(
      R"(device.attributes["gpu.deviceshare.io"].productName.startsWith("NVIDIA"))",
      gpu);
  ExpectTrue(
      R"(device.attributes["resource.kubernetes.io"].pcieRoot == "pci0000:00")",
      gpu);
  // Index and field syntax are the same lookup.
  ExpectTrue(
      R"(device.attributes["gpu.deviceshare.io"]["uuid"] == "GPU-0a1b2c3d")",
      gpu);
  ExpectTrue(
      R"(device.capacity["gpu.deviceshare.io"].cores.asInteger() == 100)", gpu);
  // A computed domain (an owned string) works like a literal one.
  ExpectTrue(
      R"(device.attributes["GPU.DeviceShare.io".lowerAscii()].mode == "hami-core")",
      gpu);
  // A bare key is not another domain's.
  EXPECT_THAT(
      Eval(R"(device.attributes["resource.kubernetes.io"].uuid == "x")", gpu),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               HasSubstr("no such key: uuid")));
}

TEST(DraCelTest, MissingAttributeIsAnError) {
  Device gpu = H100();
  EXPECT_THAT(
      Eval(R"(device.attributes["gpu.deviceshare.io"].nope == "x")", gpu),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               HasSubstr("no such key: nope")));
  EXPECT_THAT(
      Eval(R"(device.attributes["unknown.example.com"].nope == 1)", gpu),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               HasSubstr("no such key: nope")));
  EXPECT_THAT(
      Eval(R"(device.capacity["gpu.deviceshare.io"].sm.asInteger() > 1)", gpu),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               HasSubstr("no such key: sm")));
}

TEST(DraCelTest, InTestsPresence) {
  Device gpu = H100();
  ExpectTrue(R"("uuid" in device.attributes["gpu.deviceshare.io"])", gpu);
  ExpectTrue(R"("productName" in device.attributes["gpu.deviceshare.io"])",
             gpu);
  ExpectFalse(R"("nope" in device.attributes["gpu.deviceshare.io"])", gpu);
  ExpectFalse(R"("uuid" in device.attributes["unknown.example.com"])", gpu);
  ExpectTrue(R"("memory" in device.capacity["gpu.deviceshare.io"])", gpu);
  ExpectFalse(R"("memory" in device.capacity["resource.kubernetes.io"])", gpu);
  ExpectTrue(R"("resource.kubernetes.io" in device.attributes)", gpu);
  ExpectTrue(R"("gpu.deviceshare.io" in device.capacity)", gpu);
  ExpectFalse(R"("unknown.example.com" in device.attributes)", gpu);
  // The guard keeps the lookup from erring.
  ExpectFalse(
      R"("nope" in device.attributes["gpu.deviceshare.io"] && device.attributes["gpu.deviceshare.io"].nope == "x")",
      gpu);
}

TEST(DraCelTest, Comparisons) {
  Device gpu = H100();
  for (
      std::string_view e : {
          "1 == 1",
          "1 != 2",
          "1 < 2",
          "2 <= 2",
          "3 > 2",
          "3 >= 3",
          "-1 < 0",
          "0x10 == 16",
          "--2 == 2",
          R"("a" < "b")",
          R"("a" <= "a")",
          R"("b" > "a")",
          R"("ab" >= "a")",
          R"("x" != "y")",
          "true == true",
          "true != false",
          "false < true",
          R"(device.attributes["gpu.deviceshare.io"].index == 0)",
          R"(device.attributes["gpu.deviceshare.io"].index < 1)",
          R"(device.attributes["gpu.deviceshare.io"].mig == false)",
          R"(device.attributes["gpu.deviceshare.io"].driverVersion == semver("550.54.15"))",
          R"(quantity("1") == quantity("1000m"))",
          R"(quantity("1Ki") == quantity("1024"))",
          R"(quantity("1k") == quantity("1000"))",
          R"(device.capacity["gpu.deviceshare.io"].memory == quantity("80Gi"))",
          R"(device.capacity["gpu.deviceshare.io"].cores != quantity("99"))",
          R"(semver("1.0.0+build.1") == semver("1.0.0"))",
          "device.allowMultipleAllocations == false",
      }) {
    ExpectTrue(e, gpu);
  }
  for (std::string_view e : {"1 == 2", "2 < 1", R"("b" < "a")", "1 > 1",
                             "1 >= 2", "2 <= 1", "true == false"}) {
    ExpectFalse(e, gpu);
  }
  gpu.allow_multiple_allocations = true;
  ExpectTrue("device.allowMultipleAllocations", gpu);
}

// Attribute values are dyn: == across types is false, ordering an error.
TEST(DraCelTest, HeterogeneousEquality) {
  Device gpu = H100();
  ExpectFalse(R"(device.attributes["gpu.deviceshare.io"].index == "0")", gpu);
  ExpectTrue(R"(device.attributes["gpu.deviceshare.io"].index != "0")", gpu);
  EXPECT_THAT(
      Eval(R"(device.attributes["gpu.deviceshare.io"].index < "1")", gpu),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               HasSubstr("no matching overload for '<'")));
}

TEST(DraCelTest, LogicalOperators) {
  Device gpu = H100();
  ExpectTrue("true && true", gpu);
  ExpectFalse("true && false", gpu);
  ExpectTrue("false || true", gpu);
  ExpectFalse("false || false", gpu);
  ExpectTrue("!false", gpu);
  ExpectTrue("!!true", gpu);
  ExpectFalse("!(1 == 1)", gpu);
  ExpectTrue("false && true || true", gpu);  // && binds tighter
  ExpectFalse("false && (true || true)", gpu);
  // CEL's commutative error handling: the decisive side wins either way.
  const std::string kMissing =
      R"(device.attributes["gpu.deviceshare.io"].nope == "x")";
  ExpectFalse("false && " + kMissing, gpu);
  ExpectFalse(kMissing + " && false", gpu);
  ExpectTrue("true || " + kMissing, gpu);
  ExpectTrue(kMissing + " || true", gpu);
  EXPECT_THAT(Eval(kMissing + " && true", gpu),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("no such key: nope")));
  EXPECT_THAT(Eval("false || " + kMissing, gpu),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  // A dyn operand that is not a bool.
  EXPECT_THAT(
      Eval(R"(device.attributes["gpu.deviceshare.io"].index && true)", gpu),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               HasSubstr("no matching overload for '&&'")));
  EXPECT_THAT(Eval(R"(!device.attributes["gpu.deviceshare.io"].uuid)", gpu),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST(DraCelTest, QuantityFunctions) {
  Device gpu = H100();
  for (
      std::string_view e : {
          R"(quantity("1Gi").compareTo(quantity("1G")) == 1)",
          R"(quantity("1G").compareTo(quantity("1Gi")) == -1)",
          R"(quantity("500m").compareTo(quantity("0.5")) == 0)",
          R"(quantity("2").isGreaterThan(quantity("1")))",
          R"(!quantity("1").isGreaterThan(quantity("1")))",
          R"(quantity("1").isLessThan(quantity("1001m")))",
          R"(quantity("40Gi").asInteger() == 42949672960)",
          R"(quantity("3e3").asInteger() == 3000)",
          R"(device.capacity["gpu.deviceshare.io"].memory.isGreaterThan(quantity("79Gi")))",
          R"(device.capacity["gpu.deviceshare.io"].memory.asInteger() == 85899345920)",
      }) {
    ExpectTrue(e, gpu);
  }
  EXPECT_THAT(Eval(R"(quantity("1500m").asInteger() == 1)", gpu),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("cannot convert")));
}

TEST(DraCelTest, SemverFunctions) {
  Device gpu = H100();
  for (
      std::string_view e : {
          R"(semver("535.104.5").major() == 535)",
          R"(semver("535.104.5").minor() == 104)",
          R"(semver("535.104.5").patch() == 5)",
          R"(semver("1.2.3").compareTo(semver("1.2.3")) == 0)",
          R"(semver("1.2.3").compareTo(semver("1.10.0")) == -1)",
          R"(semver("2.0.0").compareTo(semver("1.99.99")) == 1)",
          R"(semver("1.0.0-alpha").isLessThan(semver("1.0.0-alpha.1")))",
          R"(semver("1.0.0-alpha.1").isLessThan(semver("1.0.0-alpha.beta")))",
          R"(semver("1.0.0-beta.2").isLessThan(semver("1.0.0-beta.11")))",
          R"(semver("1.0.0-rc.1").isLessThan(semver("1.0.0")))",
          R"(semver("1.0.0").isGreaterThan(semver("1.0.0-rc.1")))",
          R"(device.attributes["gpu.deviceshare.io"].driverVersion.major() == 550)",
          R"(device.attributes["gpu.deviceshare.io"].driverVersion.isLessThan(semver("560.0.0")))",
      }) {
    ExpectTrue(e, gpu);
  }
  gpu.attributes["driverVersion"] = DeviceAttribute::Version("535.104.05");
  EXPECT_THAT(
      Eval(
          R"(device.attributes["gpu.deviceshare.io"].driverVersion.major() > 1)",
          gpu),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               HasSubstr("not a valid semver")));
}

TEST(DraCelTest, StringFunctions) {
  Device gpu = H100();
  for (
      std::string_view e : {
          R"(device.driver.startsWith("gpu."))",
          R"(device.driver.endsWith(".io"))",
          R"(device.driver.contains("deviceshare"))",
          R"(!device.driver.contains("nvidia"))",
          R"(size(device.driver) == 18)",
          R"(device.driver.size() == 18)",
          R"("héllo".size() == 5)",
          R"("AbC-1".lowerAscii() == "abc-1")",
          R"(device.attributes["gpu.deviceshare.io"].productName.lowerAscii().contains("h100"))",
          R"(device.attributes["gpu.deviceshare.io"].uuid.startsWith("GPU-"))",
          R"('single' == "single")",
          R"("a\"b\\c\n".size() == 6)",
          R"('it\'s' == "it's")",
          "device.driver == \"gpu.deviceshare.io\" // a comment",
      }) {
    ExpectTrue(e, gpu);
  }
}

TEST(DraCelTest, ResultMustBeBool) {
  Device gpu = H100();
  EXPECT_THAT(Eval("device.driver", gpu),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("expression did not evaluate to a bool")));
  EXPECT_THAT(Eval(R"(device.attributes["gpu.deviceshare.io"].index)", gpu),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("expression did not evaluate to a bool")));
  ExpectFalse(R"(device.attributes["gpu.deviceshare.io"].mig)", gpu);
}

TEST(DraCelTest, UnsupportedConstructs) {
  struct Case {
    std::string_view expression;
    std::string_view message;
  };
  for (const Case& c : std::vector<Case>{
           {R"(device.attributes["d"].exists(x, x))",
            "unsupported: macro 'exists' at line 1, column 24"},
           {R"(has(device.attributes["d"].x))",
            "unsupported: macro 'has' at line 1, column 1"},
           {R"(device.driver.matches("^gpu"))",
            "unsupported: function 'matches' at line 1, column 15"},
           {"request.name == 1",
            "unsupported: variable 'request' at line 1, "
            "column 1"},
           {"1 + 2 == 3",
            "unsupported: arithmetic operator '+' at line 1, column 3"},
           {"device.driver == \"a\" ||\n  2 * 3 == 6",
            "unsupported: arithmetic operator '*' at line 2, column 5"},
           {"1.5 > 1",
            "unsupported: floating-point literal at line 1, "
            "column 1"},
           {"1u == 1u", "unsupported: unsigned integer literal"},
           {"[1, 2] == [1, 2]",
            "unsupported: list literal at line 1, "
            "column 1"},
           {"{} == {}", "unsupported: map literal"},
           {"true ? true : false",
            "unsupported: conditional operator '?:' at line 1, column 6"},
           {"device.name == \"gpu-0\"",
            "unsupported: field 'device.name' at line 1, column 8"},
           {"null == null", "unsupported: null"},
           {R"(b"x" == b"x")", "unsupported: bytes literal"},
           {R"(r"x" == "x")", "unsupported: raw string literal"},
           {R"("\u00e9" == "x")", "unsupported: escape sequence"},
           {R"(quantity(device.driver).asInteger() == 1)",
            "unsupported: 'quantity' with anything but one string literal"},
           {R"(1 in device.driver)", "unsupported: operator 'in' on string"},
           {R"(device.driver[0] == "g")", "unsupported: indexing string"},
           {"-device.attributes[\"d\"].x == 1",
            "unsupported: arithmetic operator '-' at line 1, column 1"},
       }) {
    EXPECT_THAT(
        CompileError(c.expression),
        StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.expression;
  }
}

TEST(DraCelTest, SyntaxErrorsNameThePosition) {
  struct Case {
    std::string_view expression;
    std::string_view message;
  };
  for (const Case& c : std::vector<Case>{
           {"device.driver ==",
            "syntax error at line 1, column 17: unexpected end"},
           {R"(device.driver == "abc)",
            "syntax error at line 1, column 18: unterminated string"},
           {R"((device.driver == "a")",
            "syntax error at line 1, column 22: expected ')', got end"},
           {R"(device.driver = "a")",
            "syntax error at line 1, column 15: unexpected character '='"},
           {R"(device.driver == "a" "b")",
            "syntax error at line 1, column 22: unexpected string"},
           {"device.", "syntax error at line 1, column 8: expected a field"},
           {"", "syntax error at line 1, column 1: unexpected end"},
           {"device.driver == \"a\" &&\n  && true",
            "syntax error at line 2, column 3: unexpected '&&'"},
           {"99999999999999999999 > 1", "integer literal out of range"},
           {"device.driver == \"a\" & true", "unexpected character '&'"},
           {"1 == 1 )", "unexpected ')'"},
           {"\x01", "unexpected byte 0x01"},
       }) {
    EXPECT_THAT(
        CompileError(c.expression),
        StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.expression;
  }
}

TEST(DraCelTest, TypeErrorsAtCompileTime) {
  for (std::string_view e : {
           "device.driver.major() == 1",
           R"(quantity("1") < quantity("2"))",
           R"(semver("1.0.0") > semver("0.1.0"))",
           "device.driver == 1",
           R"(quantity("1").compareTo(semver("1.0.0")) == 0)",
           R"(quantity("bogus").asInteger() == 1)",
           R"(semver("1.0").major() == 1)",
           R"(semver("01.0.0").major() == 1)",
           R"(device.driver.startsWith(1))",
           R"(device.driver.startsWith("a", "b"))",
           "size(1) == 1",
           "1 && true",
           "!1",
           "device == device",
           R"(device.attributes[1].x == 1)",
           R"(device.driver.foo == 1)",
       }) {
    EXPECT_THAT(CompileError(e), StatusIs(absl::StatusCode::kInvalidArgument))
        << e;
  }
}

TEST(DraCelTest, DeepNestingIsAnErrorNotACrash) {
  std::string parens = std::string(5000, '(') + "true" + std::string(5000, ')');
  EXPECT_THAT(CompileError(parens), StatusIs(absl::StatusCode::kInvalidArgument,
                                             HasSubstr("nested too deeply")));
  EXPECT_THAT(CompileError(std::string(100000, '!') + "true"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("nested too deeply")));
  std::string chain = "true";
  for (int i = 0; i < 1000; ++i) chain += " && true";
  EXPECT_THAT(CompileError(chain), StatusIs(absl::StatusCode::kInvalidArgument,
                                            HasSubstr("nested too deeply")));
  // Within the limit it works.
  ExpectTrue(std::string(40, '(') + "true" + std::string(40, ')'), H100());
}

TEST(DraCelTest, RandomInputNeverCrashes) {
  std::mt19937 rng(20251125);
  Device gpu = H100();
  // Raw bytes.
  for (int i = 0; i < 5000; ++i) {
    std::string s(rng() % 40, '\0');
    for (char& c : s) c = static_cast<char>(rng() % 256);
    absl::StatusOr<CelProgram> program = CelProgram::Compile(s);
    if (program.ok()) (void)program->Matches(CelDevice{kDriver, &gpu});
  }
  // Soups of the grammar's own tokens reach deeper into parser and
  // evaluator.
  const std::vector<std::string_view> kTokens = {"device",
                                                 ".",
                                                 "driver",
                                                 "attributes",
                                                 "capacity",
                                                 "[",
                                                 "]",
                                                 "(",
                                                 ")",
                                                 "\"gpu.deviceshare.io\"",
                                                 "\"resource.kubernetes.io\"",
                                                 "uuid",
                                                 "memory",
                                                 "index",
                                                 "driverVersion",
                                                 "mig",
                                                 "==",
                                                 "!=",
                                                 "<",
                                                 ">=",
                                                 "&&",
                                                 "||",
                                                 "!",
                                                 "in",
                                                 "1",
                                                 "-",
                                                 "true",
                                                 "quantity(\"1Gi\")",
                                                 "semver(\"1.0.0\")",
                                                 "compareTo",
                                                 "isGreaterThan",
                                                 "asInteger",
                                                 "major",
                                                 "size",
                                                 "lowerAscii",
                                                 "startsWith",
                                                 ",",
                                                 "\"GPU-\"",
                                                 "0",
                                                 "exists",
                                                 "allowMultipleAllocations"};
  int compiled = 0;
  for (int i = 0; i < 30000; ++i) {
    std::string s;
    int n = 1 + static_cast<int>(rng() % 14);
    for (int j = 0; j < n; ++j) {
      s.append(kTokens[rng() % kTokens.size()]);
      s.push_back(' ');
    }
    absl::StatusOr<CelProgram> program = CelProgram::Compile(s);
    if (!program.ok()) continue;
    ++compiled;
    (void)program->Matches(CelDevice{kDriver, &gpu});
  }
  EXPECT_GT(compiled, 0);
}

TEST(DraCelTest, ProgramKeepsItsExpressionAndCopies) {
  absl::StatusOr<CelProgram> program =
      CelProgram::Compile(R"(device.driver == "gpu.deviceshare.io")");
  ASSERT_THAT(program, IsOk());
  EXPECT_EQ(program->expression(), R"(device.driver == "gpu.deviceshare.io")");
  CelProgram copy = *program;
  Device gpu = H100();
  EXPECT_THAT(copy.Matches(CelDevice{kDriver, &gpu}), IsOk());
  EXPECT_THAT(copy.Matches(CelDevice{kDriver, nullptr}),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST(DraCelTest, CacheCompilesOnce) {
  CelCache cache;
  auto a = cache.Get(R"(device.driver == "gpu.deviceshare.io")");
  auto b = cache.Get(R"(device.driver == "gpu.deviceshare.io")");
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(b, IsOk());
  EXPECT_EQ(a->get(), b->get());
  EXPECT_THAT(cache.Get("device.driver =="),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(cache.Get("device.driver =="),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(cache.size(), 2u);
}

TEST(DraCelTest, ConcurrentCacheAndEvaluation) {
  CelCache cache;
  const Device gpu = H100();
  const std::vector<std::string> expressions = {
      R"(device.driver == "gpu.deviceshare.io")",
      R"(device.capacity["gpu.deviceshare.io"].memory.compareTo(quantity("16Gi")) >= 0)",
      R"(device.attributes["gpu.deviceshare.io"].productName.lowerAscii().contains("h100"))",
  };
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 300; ++i) {
        auto program = cache.Get(expressions[i % expressions.size()]);
        if (!program.ok()) {
          ++failures;
          continue;
        }
        absl::StatusOr<bool> got =
            (*program)->Matches(CelDevice{kDriver, &gpu});
        if (!got.ok() || !*got) ++failures;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(cache.size(), expressions.size());
}

}  // namespace
}  // namespace deviceshare::dra
