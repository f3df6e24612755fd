#!/usr/bin/env bash
# Makes the admission webhook's certificates and an overlay of this kit
# that carries them, without a cluster:
#
#   deploy/webhook-certs.sh [OUT_DIR]      (default ./deviceshare-webhook-tls)
#   kubectl apply -k OUT_DIR
#
# Writes to OUT_DIR:
#   ca.crt, ca.key        a CA (kept: run again to renew the serving
#                         certificate under the same CA, so caBundle stays)
#   tls.crt, tls.key      the serving certificate for
#                         deviceshare-scheduler.kube-system.svc (EC P-256)
#   webhook-tls-secret.yaml  Secret kube-system/deviceshare-scheduler-webhook-tls
#                         (kubernetes.io/tls, mounted by deployment.yaml)
#   kustomization.yaml    this kit + the Secret + webhook.yaml's caBundle
#
# Keep ca.key out of version control. serve reads the Secret's files again
# when they change, so renewing is: run this again, `kubectl apply -k`.
# Environment: SERVICE (deviceshare-scheduler), NAMESPACE (kube-system),
# DAYS (serving certificate, 365), CA_DAYS (3650), EXTRA_SANS (more
# subjectAltName entries, comma-separated in openssl's form, e.g.
# "IP:10.0.0.5,DNS:webhook.example.com", for a webhook registered by url:
# serve running outside the cluster).
set -euo pipefail

service=${SERVICE:-deviceshare-scheduler}
namespace=${NAMESPACE:-kube-system}
days=${DAYS:-365}
ca_days=${CA_DAYS:-3650}
extra_sans=${EXTRA_SANS:-}
out=${1:-./deviceshare-webhook-tls}
deploy_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

command -v openssl >/dev/null || { echo "webhook-certs.sh: openssl not found" >&2; exit 1; }
umask 077
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

b64() { base64 <"$1" | tr -d '\n'; }

if [[ ! -s "$out/ca.crt" || ! -s "$out/ca.key" ]]; then
  openssl ecparam -name prime256v1 -genkey -noout -out "$out/ca.key"
  openssl req -x509 -new -key "$out/ca.key" -sha256 -days "$ca_days" \
    -subj "/CN=${service}-webhook-ca" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$out/ca.crt" 2>/dev/null
fi

dns="${service}.${namespace}.svc"
cat >"$work/ext.cnf" <<EXT
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=DNS:${service},DNS:${service}.${namespace},DNS:${dns},DNS:${dns}.cluster.local${extra_sans:+,${extra_sans}}
EXT
openssl ecparam -name prime256v1 -genkey -noout -out "$work/tls.key"
openssl req -new -key "$work/tls.key" -subj "/CN=${dns}" -out "$work/tls.csr"
openssl x509 -req -in "$work/tls.csr" -CA "$out/ca.crt" -CAkey "$out/ca.key" \
  -set_serial "0x$(openssl rand -hex 16)" -sha256 -days "$days" \
  -extfile "$work/ext.cnf" -out "$work/tls.crt" 2>/dev/null
openssl verify -CAfile "$out/ca.crt" "$work/tls.crt" >/dev/null
mv "$work/tls.key" "$out/tls.key"
mv "$work/tls.crt" "$out/tls.crt"

cat >"$out/webhook-tls-secret.yaml" <<YAML
# Written by deploy/webhook-certs.sh: the admission webhook's serving
# certificate for ${dns}.
apiVersion: v1
kind: Secret
metadata:
  name: ${service}-webhook-tls
  namespace: ${namespace}
  labels:
    app.kubernetes.io/name: deviceshare-scheduler
type: kubernetes.io/tls
data:
  tls.crt: $(b64 "$out/tls.crt")
  tls.key: $(b64 "$out/tls.key")
  ca.crt: $(b64 "$out/ca.crt")
YAML

base=$(realpath --relative-to="$out" "$deploy_dir")
cat >"$out/kustomization.yaml" <<YAML
# Written by deploy/webhook-certs.sh: the deviceshare kit with the admission
# webhook's certificate. kubectl apply -k ${out}
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ${base}
  - webhook-tls-secret.yaml
patches:
  - target:
      group: admissionregistration.k8s.io
      version: v1
      kind: MutatingWebhookConfiguration
      name: deviceshare-scheduler
    patch: |-
      - op: add
        path: /webhooks/0/clientConfig/caBundle
        value: $(b64 "$out/ca.crt")
YAML
chmod 0644 "$out/ca.crt" "$out/tls.crt" "$out/kustomization.yaml"
echo "wrote $out (apply with: kubectl apply -k $out)"
