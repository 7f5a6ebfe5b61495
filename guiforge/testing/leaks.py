"""Catching leaks off a browser's loopback, for tests: UDP and TCP listeners that count
what arrives (:class:`Listeners`), and a page script (:data:`PROBE`) that tries every way
out a page has (WebRTC's STUN to an IP literal, WebTransport, fetch, WebSocket, img,
iframe, EventSource, beacon, preconnect) and returns once each attempt has ended."""

from __future__ import annotations

import socket
import subprocess
import threading

PROBE = """async ([udp, tcp]) => {
  const out = {rtc: typeof RTCPeerConnection, transport: typeof WebTransport};
  const settled = [];  // every attempt's end, so the check waits on events, not a clock
  const ended = (el, events) => new Promise(r => events.forEach(e => el.addEventListener(e, r, {once: true})));
  const atMost = (p, ms) => Promise.race([p, new Promise(r => setTimeout(r, ms))]);
  if (typeof RTCPeerConnection !== 'undefined') {
    const pc = new RTCPeerConnection({iceServers: udp.map(a => ({urls: 'stun:' + a}))});
    pc.createDataChannel('x');
    const gathered = new Promise(r => pc.addEventListener('icegatheringstatechange',
      () => pc.iceGatheringState === 'complete' && r()));
    await pc.setLocalDescription(await pc.createOffer());
    settled.push(atMost(gathered, 5000));  // STUN requests go out while candidates gather
  }
  for (const a of udp) {
    if (typeof WebTransport !== 'undefined') {
      try { settled.push(atMost(new WebTransport('https://' + a + '/').closed.catch(() => {}), 5000)); } catch (e) {}
    }
  }
  for (const a of tcp) {
    const u = 'http://' + a;
    const l = document.createElement('link'); l.rel = 'preconnect'; l.href = u; document.head.appendChild(l);
    try { navigator.sendBeacon(u + '/beacon', 'x'); } catch (e) {}
    settled.push(fetch(u + '/fetch').catch(() => {}), fetch(u + '/no-cors', {mode: 'no-cors'}).catch(() => {}));
    const img = new Image(); settled.push(ended(img, ['load', 'error'])); img.src = u + '/img.png';
    const f = document.createElement('iframe'); settled.push(ended(f, ['load', 'error']));
    f.src = u + '/frame'; document.body.appendChild(f);
    try { const ws = new WebSocket('ws://' + a + '/ws'); settled.push(ended(ws, ['close', 'error'])); } catch (e) {}
    try { const es = new EventSource(u + '/events'); settled.push(atMost(ended(es, ['error', 'open']), 5000)); } catch (e) {}
  }
  await Promise.all(settled.map(p => atMost(p, 10000)));
  return out;
}"""


class Listeners:
    """A UDP and a TCP socket on each address, counting what arrives until closed."""

    def __init__(self, hosts: list[str]):
        self.udp = {h: self._bind(h, socket.SOCK_DGRAM) for h in hosts}
        self.tcp = {h: self._bind(h, socket.SOCK_STREAM) for h in hosts}
        self.received: list[tuple[str, str]] = []
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._pump, args=(s, kind, h), daemon=True)
                         for kind, socks in (("udp", self.udp), ("tcp", self.tcp)) for h, s in socks.items()]
        for t in self._threads:
            t.start()

    @staticmethod
    def _bind(host: str, kind: int) -> socket.socket:
        s = socket.socket(socket.AF_INET, kind)
        s.bind((host, 0))
        if kind == socket.SOCK_STREAM:
            s.listen(64)
        s.settimeout(0.1)
        return s

    def _pump(self, s: socket.socket, kind: str, host: str) -> None:
        while not self._stop.is_set():
            try:
                if kind == "udp":
                    s.recvfrom(4096)
                else:
                    s.accept()[0].close()
            except OSError:
                continue
            self.received.append((kind, host))

    def drained(self) -> list[tuple[str, str]]:
        """Everything that arrived, including what is still queued in the sockets."""
        self._stop.set()
        for t in self._threads:
            t.join(timeout=2)
        for kind, socks in (("udp", self.udp), ("tcp", self.tcp)):
            for host, s in socks.items():
                s.setblocking(False)
                while True:
                    try:
                        s.recvfrom(4096) if kind == "udp" else s.accept()[0].close()
                    except OSError:
                        break
                    self.received.append((kind, host))
        return self.received

    def targets(self, kind: str) -> list[str]:
        socks = self.udp if kind == "udp" else self.tcp
        return [f"{h}:{s.getsockname()[1]}" for h, s in socks.items()]

    def close(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=2)
        for s in [*self.udp.values(), *self.tcp.values()]:
            s.close()


def non_loopback_address() -> str | None:
    out = subprocess.run(["ip", "-4", "-o", "addr", "show", "scope", "global"], capture_output=True, text=True).stdout
    addresses = [line.split()[3].split("/")[0] for line in out.splitlines() if len(line.split()) > 3]
    return addresses[0] if addresses else None
