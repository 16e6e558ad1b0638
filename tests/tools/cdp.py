#!/usr/bin/python3
"""cdp: drive headless Chromium over the DevTools protocol on a pipe
(--remote-debugging-pipe: requests on fd 3, answers on fd 4, each a JSON
text ended by a NUL), so a test can keep one page open while it changes the
load, read what the page drew, and take a screenshot. No websocket module
needed. Used by tests/integration/18-dashboard-layout.sh and 67-dashboard-history.sh.

    cdp.py  -- reads commands on stdin, one per line, and answers each with
    one line on stdout ("ok", a JSON value, or "error: WHY"), so a shell test
    drives it as a coprocess:
      open URL WIDTH HEIGHT        a fresh page of that size
      wait SECONDS JS              until JS is truthy (polled every 0.2 s)
      size WIDTH HEIGHT            resize the page's window
      eval JS                      the value of JS, as JSON
      shot FILE [SCALE]            a PNG of the viewport (SCALE 0.5: half as wide)
    Chromium's profile lives in a temp dir under $T; it is closed at EOF."""
import base64, fcntl, json, os, select, subprocess, sys, tempfile, time


class Chrome:
    def __init__(self, profile):
        to_r, self.to_w = os.pipe()
        self.from_r, from_w = os.pipe()

        def fds():  # via fds above 4, so neither pipe end is already 3 or 4
            r, w = fcntl.fcntl(to_r, fcntl.F_DUPFD, 10), fcntl.fcntl(from_w, fcntl.F_DUPFD, 10)
            os.dup2(r, 3)
            os.dup2(w, 4)
        self.p = subprocess.Popen(
            ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--hide-scrollbars", "--user-data-dir=" + profile, "--remote-debugging-pipe"],
            preexec_fn=fds, close_fds=False, stdout=subprocess.DEVNULL, stderr=open(os.path.join(profile, "chrome.err"), "w"))
        os.close(to_r)
        os.close(from_w)
        self.buf, self.id, self.session, self.profile = b"", 0, None, profile

    def errtail(self):
        try:
            return " | ".join(open(os.path.join(self.profile, "chrome.err")).read().splitlines()[-3:])
        except OSError:
            return ""

    def send(self, method, params=None, session=True, timeout=60):
        self.id += 1
        msg = {"id": self.id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        try:
            os.write(self.to_w, json.dumps(msg).encode() + b"\0")
        except BrokenPipeError:
            raise RuntimeError(f"{method}: chromium exited: {self.errtail()}")
        end = time.monotonic() + timeout
        while True:
            while b"\0" in self.buf:
                raw, self.buf = self.buf.split(b"\0", 1)
                m = json.loads(raw)
                if m.get("id") == self.id:
                    if "error" in m:
                        raise RuntimeError(f"{method}: {m['error']}")
                    return m.get("result", {})
            left = end - time.monotonic()
            if left <= 0 or not select.select([self.from_r], [], [], left)[0]:
                raise RuntimeError(f"{method}: no answer from chromium in {timeout} s")
            data = os.read(self.from_r, 1 << 20)
            if not data:
                raise RuntimeError(f"{method}: chromium exited: {self.errtail()}")
            self.buf += data

    def open(self, url, w, h):
        t = self.send("Target.createTarget", {"url": "about:blank"}, session=False)
        self.session = self.send("Target.attachToTarget", {"targetId": t["targetId"], "flatten": True},
                                 session=False)["sessionId"]
        self.size(w, h)
        self.send("Page.navigate", {"url": url})

    def size(self, w, h):
        self.w, self.h = w, h
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": w, "height": h, "deviceScaleFactor": 1, "mobile": False})

    def eval(self, js):
        r = self.send("Runtime.evaluate", {"expression": js, "returnByValue": True})
        if "exceptionDetails" in r:
            raise RuntimeError(f"eval {js}: {r['exceptionDetails'].get('text')}")
        return r["result"].get("value")

    def close(self):
        try:
            self.send("Browser.close", session=False, timeout=10)
        except Exception:
            pass
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def main():
    with tempfile.TemporaryDirectory(dir=os.environ.get("T")) as profile:
        c = Chrome(profile)
        try:
            for line in sys.stdin:
                cmd, _, rest = line.strip().partition(" ")
                if not cmd:
                    continue
                try:
                    if cmd == "open":
                        url, w, h = rest.split()
                        c.open(url, int(w), int(h))
                        out = "ok"
                    elif cmd == "wait":
                        secs, js = rest.split(" ", 1)
                        end, out, why = time.monotonic() + float(secs), "ok", "false"
                        while True:
                            try:  # the page may still be loading: an exception is a "not yet"
                                if c.eval(js):
                                    break
                            except RuntimeError as e:
                                why = str(e)
                            if time.monotonic() > end:
                                out = f"error: waited {secs} s in vain for: {js} (last: {why})"
                                break
                            time.sleep(0.2)
                    elif cmd == "size":
                        w, h = rest.split()
                        c.size(int(w), int(h))
                        out = "ok"
                    elif cmd == "eval":
                        out = json.dumps(c.eval(rest))
                    elif cmd == "shot":
                        f, _, scale = rest.partition(" ")
                        opt = {"format": "png"}
                        if scale:
                            opt["clip"] = {"x": 0, "y": 0, "width": c.w, "height": c.h, "scale": float(scale)}
                        png = c.send("Page.captureScreenshot", opt)["data"]
                        open(f, "wb").write(base64.b64decode(png))
                        out = "ok"
                    else:
                        out = f"error: unknown command {cmd}"
                except RuntimeError as e:
                    out = f"error: {e}"
                print(out.replace("\n", " "), flush=True)
        finally:
            c.close()


if __name__ == "__main__":
    main()
