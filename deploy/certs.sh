#!/usr/bin/env bash
# Makes the certificates the kit's listeners need, and an overlay of this
# kit that carries them, without a cluster:
#
#   deploy/certs.sh [OUT_DIR]      (default ./deviceshare-tls)
#   kubectl apply -k OUT_DIR
#
# Writes to OUT_DIR:
#   ca.crt, ca.key        a CA (kept: run again to renew the certificates
#                         under the same CA, so caBundle stays)
#   tls.crt, tls.key      the serving certificate for the Service
#                         deviceshare-scheduler.kube-system.svc (EC P-256):
#                         the extender (8888) and the webhook (9443)
#   client.crt, client.key  kube-scheduler's client certificate
#                         (CN=deviceshare-kube-scheduler, clientAuth): the
#                         extender answers its verbs to this one only
#   tls-secrets.yaml      Secret kube-system/deviceshare-scheduler-tls
#                         (the serving pair and ca.crt, mounted by serve)
#                         and Secret kube-system/deviceshare-kube-scheduler-
#                         client-tls (the client pair and ca.crt, mounted by
#                         kube-scheduler), both kubernetes.io/tls
#   kustomization.yaml    this kit + the Secrets + webhook.yaml's caBundle
#
# Keep ca.key out of version control. serve reads its files again when
# they change; renewing is: run this again, `kubectl apply -k`, then
# `kubectl -n kube-system rollout restart deployment deviceshare-scheduler`
# so kube-scheduler loads its new client certificate.
# Environment: SERVICE (deviceshare-scheduler), NAMESPACE (kube-system),
# DAYS (the certificates, 365), CA_DAYS (3650), EXTRA_SANS (more
# subjectAltName entries of the serving certificate, comma-separated in
# openssl's form, e.g. "IP:10.0.0.5,DNS:webhook.example.com", for serve
# running outside the cluster), SCHEDULER (extender, the default, or
# in-process: the overlay then adds the component deploy/in-process, which
# runs deviceshare-kube-scheduler instead of kube-scheduler + extender).
set -euo pipefail

service=${SERVICE:-deviceshare-scheduler}
namespace=${NAMESPACE:-kube-system}
days=${DAYS:-365}
ca_days=${CA_DAYS:-3650}
extra_sans=${EXTRA_SANS:-}
out=${1:-./deviceshare-tls}
deploy_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
case ${SCHEDULER:-extender} in
  extender) components="" ;;
  in-process) components="in-process" ;;
  *) echo "certs.sh: SCHEDULER=${SCHEDULER}: want extender or in-process" >&2; exit 2 ;;
esac

command -v openssl >/dev/null || { echo "certs.sh: openssl not found" >&2; exit 1; }
umask 077
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

b64() { base64 <"$1" | tr -d '\n'; }

if [[ ! -s "$out/ca.crt" || ! -s "$out/ca.key" ]]; then
  openssl ecparam -name prime256v1 -genkey -noout -out "$out/ca.key"
  openssl req -x509 -new -key "$out/ca.key" -sha256 -days "$ca_days" \
    -subj "/CN=${service}-ca" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$out/ca.crt" 2>/dev/null
fi

# issue NAME SUBJECT PURPOSE: a key and a certificate signed by the CA,
# NAME.key and NAME.crt in $work, with the extensions of $work/NAME.cnf;
# checked against the CA for openssl's PURPOSE (sslserver, sslclient).
issue() {
  local name=$1 subject=$2 purpose=$3
  openssl ecparam -name prime256v1 -genkey -noout -out "$work/$name.key"
  openssl req -new -key "$work/$name.key" -subj "$subject" \
    -out "$work/$name.csr"
  openssl x509 -req -in "$work/$name.csr" -CA "$out/ca.crt" \
    -CAkey "$out/ca.key" -set_serial "0x$(openssl rand -hex 16)" -sha256 \
    -days "$days" -extfile "$work/$name.cnf" -out "$work/$name.crt" 2>/dev/null
  openssl verify -CAfile "$out/ca.crt" -purpose "$purpose" "$work/$name.crt" \
    >/dev/null
}

# secret NAME CERT KEY: a kubernetes.io/tls Secret of the pair and the CA.
secret() {
  cat <<YAML
apiVersion: v1
kind: Secret
metadata:
  name: $1
  namespace: ${namespace}
  labels:
    app.kubernetes.io/name: deviceshare-scheduler
type: kubernetes.io/tls
data:
  tls.crt: $(b64 "$2")
  tls.key: $(b64 "$3")
  ca.crt: $(b64 "$out/ca.crt")
YAML
}

dns="${service}.${namespace}.svc"
cat >"$work/tls.cnf" <<EXT
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=DNS:${service},DNS:${service}.${namespace},DNS:${dns},DNS:${dns}.cluster.local${extra_sans:+,${extra_sans}}
EXT
issue tls "/CN=${dns}" sslserver

cat >"$work/client.cnf" <<EXT
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth
EXT
issue client "/CN=deviceshare-kube-scheduler" sslclient
for file in tls.key tls.crt client.key client.crt; do
  mv "$work/$file" "$out/$file"
done

{
  echo "# Written by deploy/certs.sh: the serving certificate of ${dns} (the"
  echo "# extender and the admission webhook) ..."
  secret "${service}-tls" "$out/tls.crt" "$out/tls.key"
  echo "---"
  echo "# ... and kube-scheduler's client certificate for the extender's verbs."
  secret deviceshare-kube-scheduler-client-tls "$out/client.crt" \
    "$out/client.key"
} >"$out/tls-secrets.yaml"

base=$(realpath --relative-to="$out" "$deploy_dir")
cat >"$out/kustomization.yaml" <<YAML
# Written by deploy/certs.sh: the deviceshare kit with its certificates.
# kubectl apply -k ${out}
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ${base}
  - tls-secrets.yaml
$(for c in $components; do printf 'components:\n  - %s/%s\n' "$base" "$c"; done)
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
chmod 0644 "$out/ca.crt" "$out/tls.crt" "$out/client.crt" "$out/kustomization.yaml"
echo "wrote $out (apply with: kubectl apply -k $out)"
