#!/bin/busybox sh
# /init of the second VM of the network-boot test: a machine on the provisioning network, with
# its own MAC and its own DHCP lease, that pretends to be the first VM. It asks Quarry for the
# first VM's cloud-init and boot script by that VM's MAC and tries to log in as its agent with
# whatever secret it found (or a guess), and prints what it got. Then it powers the VM off.
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for a in $(cat /proc/cmdline); do
  case "$a" in quarry.url=*) Q=${a#quarry.url=};; quarry.target=*) T=${a#quarry.target=};; esac
done
for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci failover net_failover virtio_net; do
  insmod /lib/modules/$m.ko* || echo "insmod $m failed"
done
for i in $(seq 50); do [ -e /sys/class/net/eth0 ] && break; sleep 0.1; done
ip link set lo up; ip link set eth0 up
printf '#!/bin/sh\n[ "$1" = bound ] && ip addr add "$ip/$mask" dev "$interface" && echo "$ip" > /tmp/ip\nexit 0\n' > /dhcp.sh
chmod +x /dhcp.sh
udhcpc -C -i eth0 -q -n -t 5 -T 1 -s /dhcp.sh
echo "quarry-attacker: dhcp $(cat /tmp/ip) as $(cat /sys/class/net/eth0/address), target $T"
field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p" "$2" | head -1; }
wget -q -O /tmp/user-data "$Q/templates/rendered/cloud-init?mac=$T" || echo "quarry-attacker: user-data fetch failed"
S=$(field secret /tmp/user-data)
echo "quarry-attacker: user-data secret=${S:-none}"
wget -q -O /tmp/boot "$Q/boot/config?mac=$T" || echo "quarry-attacker: boot fetch failed"
echo "quarry-attacker: boot $(sed -n 's/^set quarry-action //p' /tmp/boot) kernel=$(grep -c '^kernel ' /tmp/boot)"
ID=$(sed -n 's/^set quarry-node //p' /tmp/boot)
wget -q -S -O /tmp/login --header 'Content-Type: application/json' --post-data "{\"username\":\"agent:$ID\",\"password\":\"${S:-guessed-secret-guessed-secret-guessed-0000}\"}" "$Q/user/login" 2>/tmp/headers
echo "quarry-attacker: login $(sed -n 's/.*HTTP\/1\.[01] \([0-9][0-9]*\).*/\1/p' /tmp/headers | head -1)"
echo "quarry-attacker: done"
poweroff -f
