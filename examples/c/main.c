/* c_example: deviceshare's C API from C11, built against the installed
 * package (find_package(deviceshare COMPONENTS c), or pkg-config:
 * `cc -std=c11 main.c $(pkg-config --cflags --libs deviceshare)`).
 *
 * It creates a scheduler with the default config, registers a small
 * cluster in the inventory form (a part of examples/cluster.yaml), asks
 * where a pod of 20 GiB and 30 % of one GPU goes, prints the decision
 * JSON, releases the pod and destroys the scheduler. */
#include <stdio.h>
#include <stdlib.h>

#include "deviceshare/c/deviceshare.h"

static const char kCluster[] =
    "nodes:\n"
    "- name: a100-1\n"
    "  gpus:\n"
    "  - {model: \"NVIDIA A100-SXM4-80GB\", memory_mib: 81920, count: 4}\n"
    "- name: a30-1\n"
    "  gpus:\n"
    "  - {model: \"NVIDIA A30\", memory_mib: 24576, count: 4, split: 4}\n";

static const char kPod[] =
    "{\"apiVersion\": \"v1\", \"kind\": \"Pod\","
    " \"metadata\": {\"name\": \"hami-small\", \"namespace\": \"team-a\","
    "              \"uid\": \"c-example-0001\"},"
    " \"spec\": {\"containers\": [{\"name\": \"main\", \"resources\":"
    "   {\"limits\": {\"nvidia.com/gpu\": 1, \"nvidia.com/gpumem\": 20480,"
    "                 \"nvidia.com/gpucores\": 30}}}]}}";

/* Prints a failed call's code and message; frees the message. */
static int Fail(const char* call, deviceshare_code code, char* error) {
  fprintf(stderr, "c_example: %s: code %d: %s\n", call, (int)code,
          error != NULL ? error : "(no message)");
  deviceshare_free(error);
  return 1;
}

int main(void) {
  char* error = NULL;
  deviceshare_code code;

  /* The header this program was compiled with must match the library. */
  if (deviceshare_abi_version() != DEVICESHARE_ABI_VERSION) {
    fprintf(stderr, "c_example: library ABI %d, header ABI %d\n",
            deviceshare_abi_version(), DEVICESHARE_ABI_VERSION);
    return 1;
  }
  printf("deviceshare %s\n", deviceshare_version());

  deviceshare_scheduler* scheduler = NULL;
  code = deviceshare_scheduler_create(NULL, &scheduler, &error);
  if (code != DEVICESHARE_OK) return Fail("scheduler_create", code, error);

  int status = 0;
  char* nodes = NULL;
  char* decision = NULL;
  code = deviceshare_upsert_nodes(scheduler, kCluster, &nodes, &error);
  if (code != DEVICESHARE_OK) {
    status = Fail("upsert_nodes", code, error);
    goto done;
  }
  printf("nodes: %s\n", nodes);

  /* NULL options: every node is a candidate. */
  code = deviceshare_schedule(scheduler, kPod, NULL, &decision, &error);
  if (code != DEVICESHARE_OK) {
    status = Fail("schedule", code, error);
    goto done;
  }
  printf("decision: %s\n", decision);

  /* The pod is gone: its share is free again. */
  code = deviceshare_release(scheduler, "c-example-0001", &error);
  if (code != DEVICESHARE_OK) status = Fail("release", code, error);

done:
  deviceshare_free(decision);
  deviceshare_free(nodes);
  code = deviceshare_scheduler_destroy(scheduler);
  if (code != DEVICESHARE_OK && status == 0) {
    status = Fail("scheduler_destroy", code, NULL);
  }
  return status;
}
