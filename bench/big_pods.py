#!/usr/bin/env python3
"""Writes big simulate inputs (issue 45, "Big inputs").

  bench/big_pods.py cluster NODES > cluster.yaml   # short form, 8 x A100 each
  bench/big_pods.py yaml PODS > pods.yaml          # one Pod per document
  bench/big_pods.py list PODS > pods.json          # one JSON kind: List, as
                                                   # kubectl get pods -o json

Each pod asks for 1 GPU, 4 GiB and 10 % of its SMs (HAMi's resources), so
NODES x 80 of them fit.
"""
import json
import sys


def pod(i):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"p{i}", "namespace": "bench",
                     "uid": f"00000000-0000-4000-8000-{i:012d}"},
        "spec": {"containers": [{
            "name": "main", "image": "busybox",
            "resources": {"limits": {"nvidia.com/gpu": 1,
                                     "nvidia.com/gpumem": 4096,
                                     "nvidia.com/gpucores": 10}}}]},
    }


def main():
    what, count = sys.argv[1], int(sys.argv[2])
    out = sys.stdout
    if what == "cluster":
        out.write("nodes:\n")
        for n in range(count):
            out.write(f"- name: node-{n}\n  gpus:\n"
                      "  - {model: \"NVIDIA A100-SXM4-80GB\", "
                      "memory_mib: 81920, count: 8, split: 10}\n")
    elif what == "yaml":
        for i in range(count):
            p = pod(i)
            out.write(
                "---\napiVersion: v1\nkind: Pod\nmetadata:\n"
                f"  name: {p['metadata']['name']}\n  namespace: bench\n"
                f"  uid: {p['metadata']['uid']}\nspec:\n  containers:\n"
                "  - name: main\n    image: busybox\n    resources:\n"
                "      limits: {nvidia.com/gpu: 1, nvidia.com/gpumem: 4096, "
                "nvidia.com/gpucores: 10}\n")
    elif what == "list":
        out.write('{\n    "apiVersion": "v1",\n    "items": [\n')
        for i in range(count):
            text = json.dumps(pod(i), indent=4)
            text = "\n".join("        " + line for line in text.splitlines())
            out.write(text + (",\n" if i + 1 < count else "\n"))
        out.write('    ],\n    "kind": "List",\n    "metadata": '
                  '{\n        "resourceVersion": ""\n    }\n}\n')
    else:
        sys.exit(f"unknown form {what}: want cluster, yaml or list")


if __name__ == "__main__":
    main()
