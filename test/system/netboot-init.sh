#!/bin/busybox sh
# /init of the network-boot test's initrd: what an installer does first. It takes its
# cloud-init user-data from Quarry (the URL is on the kernel command line of the iPXE script
# Quarry served), logs in as the node's agent with the first secret found there, replaces that
# secret as every agent must, and sends one inventory report. Then it powers the VM off.
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for a in $(cat /proc/cmdline); do
  case "$a" in quarry.url=*) Q=${a#quarry.url=};; quarry.cloud-init=*) CI=${a#quarry.cloud-init=};; esac
done
echo "quarry-initrd: master $Q"
for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci failover net_failover virtio_net; do
  insmod /lib/modules/$m.ko* || echo "insmod $m failed"
done
for i in $(seq 50); do [ -e /sys/class/net/eth0 ] && break; sleep 0.1; done
ip link set lo up; ip link set eth0 up
printf '#!/bin/sh\n[ "$1" = bound ] && ip addr add "$ip/$mask" dev "$interface" && echo "$ip" > /tmp/ip\nexit 0\n' > /dhcp.sh
chmod +x /dhcp.sh
# -C: no client id, so dnsmasq knows the kernel by its MAC, as it knew iPXE, and leases it the same address.
udhcpc -C -i eth0 -q -n -t 5 -T 1 -s /dhcp.sh
IP=$(cat /tmp/ip); MAC=$(cat /sys/class/net/eth0/address)
echo "quarry-initrd: dhcp $IP"
fail() { echo "quarry-initrd: FAILED: $*"; poweroff -f; }
wget -q -O /tmp/user-data "$CI" || fail "user-data"
field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p" "$2" | head -1; }
U=$(field username /tmp/user-data); S=$(field secret /tmp/user-data)
[ -n "$U" ] && [ -n "$S" ] || fail "no credential in the user-data"
echo "quarry-initrd: user-data for $U"
json() { wget -q -S -O "$3" --header 'Content-Type: application/json' ${TOKEN:+--header "Cookie: access_token=$TOKEN"} --post-data "$2" "$Q$1" 2>/tmp/headers; }
json /user/login "{\"username\":\"$U\",\"password\":\"$S\"}" /tmp/login || fail "login"
TOKEN=$(sed -n 's/.*[Ss]et-[Cc]ookie: access_token=\([^;]*\);.*/\1/p' /tmp/headers | head -1)
[ -n "$TOKEN" ] || fail "no access_token cookie"
json /node/credential '{}' /tmp/credential || fail "rotate"
[ -n "$(field secret /tmp/credential)" ] || fail "no new secret"
BOOT=$(cat /proc/sys/kernel/random/boot_id)
json /node/hardware "{\"bootId\":\"$BOOT\",\"hostname\":\"netboot-vm\",\"ip\":\"$IP\",\"disks\":[],\"nics\":[{\"name\":\"eth0\",\"mac\":\"$MAC\",\"ip\":\"$IP\",\"connected\":true,\"mtu\":1500}],\"daemons\":{\"mon\":false,\"mgr\":false,\"mds\":false,\"rgw\":false,\"osds\":[]}}" /tmp/report || fail "report"
echo "quarry-initrd: reported"
poweroff -f
