# Tries every way out: TCP and UDP to the host's loopback listeners (ports in
# the environment), IPv6 loopback, raw, packet and netlink sockets. Prints one
# line per attempt; the test checks the host side saw nothing.
import os
import socket

tcp = int(os.environ["HOST_TCP_PORT"])
udp = int(os.environ["HOST_UDP_PORT"])
attempts = [
    ("tcp4", lambda: socket.create_connection(("127.0.0.1", tcp), timeout=2).sendall(b"LEAK")),
    ("tcp6", lambda: socket.create_connection(("::1", tcp), timeout=2).sendall(b"LEAK")),
    ("udp4", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"LEAK", ("127.0.0.1", udp))),
    ("udp6", lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).sendto(b"LEAK", ("::1", udp))),
    ("raw", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)),
    ("packet", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW)),
    ("netlink", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0).bind((0, 0))),
    ("dns", lambda: socket.getaddrinfo("example.com", 80)),
]
for name, f in attempts:
    for i in range(3):
        try:
            f()
            print(name, "sent")
        except Exception as e:
            print(name, "blocked:", type(e).__name__, e)
