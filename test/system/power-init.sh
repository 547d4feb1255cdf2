#!/bin/busybox sh
# /init of the power test's VM, both its installer and its "installed system". Installing (the
# kernel line has quarry.cloud-init, Quarry's install boot): take the first secret from the
# cloud-init user-data, log in as the node's agent, replace the secret and keep the new one on the
# machine's disk (the test's disk server stands in for it: the VM has no disk driver). Booted
# locally (the master sent it back to its firmware, whose script boots this again with
# quarry.disk): read the secret back from the disk. Then be the agent: report every 2 s, claim
# runs, and carry out node.shutdown as a real agent does (report, then power off).
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for a in $(cat /proc/cmdline); do
  case "$a" in quarry.url=*) Q=${a#quarry.url=};; quarry.cloud-init=*) CI=${a#quarry.cloud-init=};; quarry.disk=*) D=${a#quarry.disk=};; esac
done
D=${D:-@DISK@}
for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci failover net_failover virtio_net; do
  insmod /lib/modules/$m.ko* || echo "insmod $m failed"
done
for i in $(seq 50); do [ -e /sys/class/net/eth0 ] && break; sleep 0.1; done
ip link set lo up; ip link set eth0 up
printf '#!/bin/sh\n[ "$1" = bound ] && ip addr add "$ip/$mask" dev "$interface" && echo "$ip" > /tmp/ip\nexit 0\n' > /dhcp.sh
chmod +x /dhcp.sh
udhcpc -C -i eth0 -q -n -t 5 -T 1 -s /dhcp.sh
IP=$(cat /tmp/ip); MAC=$(cat /sys/class/net/eth0/address)
fail() { echo "quarry-power: FAILED: $*"; poweroff -f; }
field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p" "$2" | head -1; }
json() { wget -q -S -O "$3" --header 'Content-Type: application/json' ${TOKEN:+--header "Cookie: access_token=$TOKEN"} --post-data "$2" "$Q$1" 2>/tmp/headers; }
login() {
  TOKEN=
  json /user/login "{\"username\":\"$U\",\"password\":\"$S\"}" /tmp/login || fail "login"
  TOKEN=$(sed -n 's/.*[Ss]et-[Cc]ookie: access_token=\([^;]*\);.*/\1/p' /tmp/headers | head -1)
  [ -n "$TOKEN" ] || fail "no access_token cookie"
}
if [ -n "$CI" ]; then
  echo "quarry-power: installing, master $Q"
  wget -q -O /tmp/user-data "$CI" || fail "user-data"
  U=$(field username /tmp/user-data); S=$(field secret /tmp/user-data)
  [ -n "$U" ] && [ -n "$S" ] || fail "no credential in the user-data"
  login
  json /node/credential '{}' /tmp/credential || fail "rotate"
  S=$(field secret /tmp/credential); [ -n "$S" ] || fail "no new secret"
  wget -q -O /dev/null --post-data "$U $S" "$D/credential" || fail "writing the disk"
  echo "quarry-power: installed"
else
  echo "quarry-power: booted from the disk, master $Q"
  wget -q -O /tmp/disk "$D/credential" || fail "reading the disk"
  U=$(cut -d' ' -f1 /tmp/disk); S=$(cut -d' ' -f2 /tmp/disk)
  login
fi
BOOT=$(cat /proc/sys/kernel/random/boot_id)
echo "quarry-power: agent $U up, boot $BOOT"
while true; do
  json /node/hardware "{\"bootId\":\"$BOOT\",\"hostname\":\"power-vm\",\"ip\":\"$IP\",\"disks\":[],\"nics\":[{\"name\":\"eth0\",\"mac\":\"$MAC\",\"ip\":\"$IP\",\"connected\":true,\"mtu\":1500}],\"daemons\":{\"mon\":false,\"mgr\":false,\"mds\":false,\"rgw\":false,\"osds\":[]}}" /tmp/report || login
  rm -f /tmp/run
  json /node/runs/claim '{"waitMs":2000}' /tmp/run
  ID=$(field id /tmp/run); TASK=$(field taskName /tmp/run)
  [ -n "$ID" ] || continue
  echo "quarry-power: run $TASK"
  if [ "$TASK" = node.shutdown ]; then
    json "/node/runs/$ID/logs" '{"lines":[{"timestamp":"2020-01-01T00:00:00.000Z","level":"info","message":"poweroff"}]}' /tmp/x
    json "/node/runs/$ID/finish" '{"ok":true}' /tmp/x
    echo "quarry-power: powering off"
    poweroff -f
  fi
  json "/node/runs/$ID/finish" "{\"ok\":false,\"error\":\"the test VM does not know $TASK\"}" /tmp/x
done
