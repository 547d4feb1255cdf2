#!/usr/bin/env bash
# Builds a Ceph cluster in the lab through the REST API only, as an operator's script would:
# three monitors, a manager, an MDS, a gateway, an OSD on every eligible disk, a filesystem and
# an RGW user. Start Quarry first (npm start, or: ADMIN_PASSWORD=... npm start) and run:
#   QUARRY=http://127.0.0.1:8080 ADMIN_PASSWORD=... examples/lab-cluster.sh
# Needs curl and jq. Every call only declares desired state; the script then waits for the
# loops to converge, printing what /ceph/metrics says.
set -euo pipefail
Q=${QUARRY:-http://127.0.0.1:8080}
: "${ADMIN_PASSWORD:?set ADMIN_PASSWORD to the admin password Quarry printed or was given}"
jar=$(mktemp)
trap 'rm -f "$jar"' EXIT

api() { # api METHOD PATH [JSON]
  local args=(-sS -f -b "$jar" -c "$jar" -X "$1" "$Q$2")
  [ $# -ge 3 ] && args+=(-H 'content-type: application/json' -d "$3")
  curl "${args[@]}"
}

api POST /user/login "$(jq -n --arg p "$ADMIN_PASSWORD" '{username: "admin", password: $p}')" >/dev/null
# Machines that network-boot wait for approval. These are the lab's own: approve whatever waits
# (on a real network, check each one's bootAddress and MAC first).
echo "approving waiting machines until three nodes are active"
until [ "$(api GET /nodes/details | jq '[.[] | select(.status == "active")] | length')" -ge 3 ]; do
  waiting=$(api GET /nodes/details | jq -c '[.[] | select(.approved == false) | .id][:100]')
  [ "$waiting" = "[]" ] || api POST /invoke/node "{\"operation\":\"node.approve\",\"nodeIds\":$waiting}" >/dev/null
  sleep 1
done
mapfile -t nodes < <(api GET /nodes/details | jq -r '[.[] | select(.status == "active")][:3][].id')

for n in "${nodes[@]}"; do
  disk=$(api GET /disks | jq -r --arg n "$n" '[.[] | select(.nodeId == $n and .eligible)][0].id')
  api POST /ceph/mon/create "{\"nodeId\":\"$n\",\"diskId\":\"$disk\"}" >/dev/null
done
echo "three monitors declared; waiting for quorum"
until api GET /ceph/metrics 2>/dev/null | jq -e '.monCount == 3' >/dev/null; do sleep 1; done

api POST /ceph/mgr "{\"nodeId\":\"${nodes[0]}\"}" >/dev/null
api POST /ceph/mds "{\"nodeId\":\"${nodes[1]}\"}" >/dev/null
api POST /gateways/rgw/deploy "{\"nodeId\":\"${nodes[2]}\"}" >/dev/null
eligible=$(api GET /disks | jq -c '[.[] | select(.eligible) | .id][:100]')
api POST /invoke/disk "{\"operation\":\"ceph.create-osd\",\"diskIds\":$eligible}" | jq -r '.results | group_by(.status) | map("\(.[0].status): \(length)") | join(", ")'
want=$(echo "$eligible" | jq length)
echo "waiting for $want OSDs to run"
until api GET /ceph/metrics | jq -e --argjson w "$want" '.osdUp >= $w' >/dev/null; do sleep 1; done

api POST /ceph/fs '{"name":"cephfs","metadataPool":"cephfs_metadata","dataPool":"cephfs_data"}' >/dev/null
until api GET /ceph/fs | jq -e '.[0].status.phase == "ready"' >/dev/null; do sleep 1; done
echo "filesystem cephfs ready"
api POST /gateways/rgw/users '{"userId":"demo","displayName":"Demo user"}' | jq '{userId, accessKey: .keys[0].accessKey}'
api GET /ceph/metrics | jq .
