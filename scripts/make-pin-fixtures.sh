#!/usr/bin/env bash
# Regenerates testdata/pin/chain/: a root, an intermediate it issued, a leaf
# the intermediate issued, an unrelated root, a re-wrapped copy of the root,
# and expected.txt with each one's pins computed by the openssl CLI alone.
set -euo pipefail
out=${1:-testdata/pin/chain}
mkdir -p "$out"; cd "$out"
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$t/$1.key" 2>/dev/null; }
ca_ext='basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid'
for r in root other; do
  key $r
  openssl req -x509 -new -key "$t/$r.key" -subj "/CN=kjoin test $r" -days 36500 -out $r.pem \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
done
key inter
openssl req -new -key "$t/inter.key" -subj "/CN=kjoin test inter" -out "$t/inter.csr"
printf "$ca_ext\n" >"$t/ca.ext"
openssl x509 -req -in "$t/inter.csr" -CA root.pem -CAkey "$t/root.key" -CAcreateserial -days 36500 -extfile "$t/ca.ext" -out inter.pem 2>/dev/null
key leaf
openssl req -new -key "$t/leaf.key" -subj "/CN=kjoin test leaf" -out "$t/leaf.csr"
printf 'basicConstraints=CA:FALSE\nsubjectAltName=DNS:localhost\n' >"$t/leaf.ext"
openssl x509 -req -in "$t/leaf.csr" -CA inter.pem -CAkey "$t/inter.key" -CAcreateserial -days 36500 -extfile "$t/leaf.ext" -out leaf.pem 2>/dev/null
# The same root, re-wrapped: 76-column base64, CRLF line ends, text around the block, trailing blanks.
{ printf 'subject=kjoin test root\r\n'; printf -- '-----BEGIN CERTIFICATE-----\r\n'
  openssl x509 -in root.pem -outform der | base64 -w76 | sed 's/$/\r/'
  printf -- '-----END CERTIFICATE-----\r\n\r\n  \r\n'; } >root-rewrapped.pem
: >expected.txt
for c in root inter leaf other; do
  echo "$c spki sha256:$(openssl x509 -in $c.pem -pubkey -noout | openssl pkey -pubin -outform der | sha256sum | cut -d' ' -f1)" >>expected.txt
  echo "$c der root-sha256:$(openssl x509 -in $c.pem -outform der | sha256sum | cut -d' ' -f1)" >>expected.txt
done
rm -f ./*.srl
