#!/usr/bin/env bash
# docs_runnable_blocks (label `docs`): runs every shell block the READMEs
# mark runnable, as written, from the repository root, and fails naming the
# block's file and line with its output when one fails.
#
#   run_blocks.sh SOURCE_DIR BUILD_DIR FILE.md...
#
# In the Markdown, a ```sh block preceded by
#   <!-- runnable -->                 is run (with a 60 s limit; or
#   <!-- runnable timeout=120 -->     another one), and by
#   <!-- not runnable: REASON -->     is not (a cluster, root, a GPU, the
#                                     network, minutes of work, ...).
# Every ```sh block of FILE.md must carry one of the two markers, so a new
# command is either tested or says why not. The links of FILE.md are
# checked too: relative ones must name an existing file, and #anchors a
# heading of the file they point into.
#
# The "repository root" the blocks run in is a scratch folder of links to
# every entry of SOURCE_DIR, with `build` pointing at BUILD_DIR: the README's
# `./build/...` paths reach this build, and a file a command writes at the
# root lands in the scratch folder, which is removed at the end. HOME and
# TMPDIR point into it as well.
set -uo pipefail

if (($# < 3)); then
  echo "usage: $0 SOURCE_DIR BUILD_DIR FILE.md..." >&2
  exit 2
fi
source_dir=$(cd "$1" && pwd)
build_dir=$(cd "$2" && pwd)
shift 2

scratch=$(mktemp -d "${TMPDIR:-/tmp}/deviceshare-docs.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
root="$scratch/root"
mkdir -p "$root" "$scratch/home" "$scratch/tmp"
shopt -s dotglob nullglob
for entry in "$source_dir"/*; do
  name=$(basename "$entry")
  case "$name" in .git | build) continue ;; esac
  ln -s "$entry" "$root/$name"
done
ln -s "$build_dir" "$root/build"

failures=0
ran=0
for file in "$@"; do
  path="$source_dir/$file"
  if [[ ! -f "$path" ]]; then
    echo "$file: missing" >&2
    failures=$((failures + 1))
    continue
  fi
  # One record per ```sh block: start line, marker, body (NUL-separated).
  while IFS= read -r -d '' record; do
    line=${record%%$'\t'*}
    rest=${record#*$'\t'}
    marker=${rest%%$'\t'*}
    body=${rest#*$'\t'}
    case "$marker" in
      runnable*)
        limit=60
        if [[ "$marker" =~ timeout=([0-9]+) ]]; then limit=${BASH_REMATCH[1]}; fi
        ran=$((ran + 1))
        echo "=== $file:$line (limit ${limit}s)"
        printf '%s\n' "$body" | sed 's/^/    /'
        start=$(date +%s.%N)
        output=$(cd "$root" && HOME="$scratch/home" TMPDIR="$scratch/tmp" \
                 timeout -k 5 "$limit" bash -e -o pipefail -c "$body" 2>&1)
        rc=$?
        took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
        if ((rc != 0)); then
          failures=$((failures + 1))
          echo "FAIL $file:$line: exit status $rc after ${took}s$( ((rc == 124)) && echo ' (timed out)'); output:"
          printf '%s\n' "$output" | tail -n 60 | sed 's/^/    | /'
        else
          echo "ok   $file:$line (${took}s)"
        fi
        ;;
      not\ runnable:*) ;;
      *)
        failures=$((failures + 1))
        echo "FAIL $file:$line: a \`\`\`sh block without <!-- runnable --> or <!-- not runnable: REASON --> before it"
        ;;
    esac
  done < <(awk '
    # Fences may be indented (inside a list item); the marker is the last
    # non-blank line before the fence, at any indentation.
    function trim(x) { sub(/^[ \t]+/, "", x); sub(/[ \t]+$/, "", x); return x }
    /^[[:space:]]*$/ { if (!inblock) next }
    !inblock && trim($0) == "```sh" {
      inblock = 1; start = NR; body = ""
      match($0, /^[ \t]*/); indent = RLENGTH
      marker = ""
      p = trim(prev)
      if (p ~ /^<!-- runnable( timeout=[0-9]+)? -->$/) {
        marker = p; sub(/^<!-- /, "", marker); sub(/ -->$/, "", marker)
      } else if (p ~ /^<!-- not runnable: .+ -->$/) {
        marker = "not runnable:"
      }
      next
    }
    inblock && trim($0) == "```" {
      inblock = 0
      printf "%d\t%s\t%s%c", start, marker, body, 0
      prev = ""
      next
    }
    inblock { body = body (body == "" ? "" : "\n") substr($0, indent + 1); next }
    { prev = $0 }
  ' "$path")
  # A runnable marker must be followed by a ```sh block, or it tests nothing.
  while IFS=: read -r mline _; do
    next_fence=$(awk -v from="$mline" 'NR > from && !/^[[:space:]]*$/ { print; exit }' "$path")
    if [[ "$(echo "$next_fence" | sed 's/^[[:space:]]*//;s/[[:space:]]*$//')" != '```sh' ]]; then
      failures=$((failures + 1))
      echo "FAIL $file:$mline: a runnable marker not followed by a \`\`\`sh block"
    fi
  done < <(grep -n '^[[:space:]]*<!-- \(runnable\|not runnable\)' "$path")
done

# Links: every relative link of FILE.md must name a file that exists, and
# every #anchor (in the same file or another Markdown file) a heading there,
# with GitHub's anchors (lower case, punctuation but - and _ dropped, spaces
# to -, a repeated heading gets -1, -2, ...).
anchors() {
  awk '
    /^[[:space:]]*```/ { code = !code; next }
    code || !/^#+ / { next }
    {
      h = $0; sub(/^#+ +/, "", h); h = tolower(h)
      gsub(/[^a-z0-9 _-]/, "", h); gsub(/ /, "-", h)
      n = seen[h]++; print (n ? h "-" n : h)
    }' "$1"
}
links=0
for file in "$@"; do
  path="$source_dir/$file"
  [[ -f "$path" ]] || continue
  dir=$(dirname "$path")
  while IFS=: read -r line target; do
    links=$((links + 1))
    case "$target" in http://* | https://* | mailto:*) continue ;; esac
    name=${target%%#*}
    anchor=""
    [[ "$target" == *"#"* ]] && anchor=${target#*#}
    linked="$path"
    if [[ -n "$name" ]]; then
      linked="$dir/$name"
      if [[ ! -e "$linked" ]]; then
        failures=$((failures + 1))
        echo "FAIL $file:$line: link to $name: no such file"
        continue
      fi
    fi
    if [[ -n "$anchor" && "$linked" == *.md ]] &&
       ! anchors "$linked" | grep -qxF -- "$anchor"; then
      failures=$((failures + 1))
      echo "FAIL $file:$line: link to ${name:-this file}#$anchor: no such heading"
    fi
  done < <(awk '
    /^[[:space:]]*```/ { code = !code; next }
    code { next }
    {
      rest = $0
      while (match(rest, /\]\([^) ]+\)/)) {
        print NR ":" substr(rest, RSTART + 2, RLENGTH - 3)
        rest = substr(rest, RSTART + RLENGTH)
      }
    }' "$path")
done
echo "$links links checked"

echo "$ran runnable blocks run, $failures failures"
if ((ran == 0)); then
  echo "FAIL: no runnable block found" >&2
  exit 1
fi
((failures == 0))
