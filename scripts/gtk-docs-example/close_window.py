# Sends WM_DELETE_WINDOW (what a window manager sends when its close button is pressed) to the
# first mapped window that accepts it on $DISPLAY, waiting up to 30 s for one. Used by
# scripts/gtk-docs-example.sh. Needs python-xlib.
import sys, time
from Xlib import display, X, protocol
d = display.Display()
root = d.screen().root
deadline = time.time() + 30
target = None
while time.time() < deadline and target is None:
    def walk(w):
        global target
        for c in w.query_tree().children:
            try:
                protos = c.get_wm_protocols()
            except Exception:
                protos = None
            if protos and d.intern_atom('WM_DELETE_WINDOW') in protos and c.get_attributes().map_state == X.IsViewable:
                target = c
                return
            walk(c)
    walk(root)
    time.sleep(0.5)
if target is None:
    print("no window"); sys.exit(1)
ev = protocol.event.ClientMessage(window=target, client_type=d.intern_atom('WM_PROTOCOLS'),
                                  data=(32, [d.intern_atom('WM_DELETE_WINDOW'), X.CurrentTime, 0, 0, 0]))
target.send_event(ev)
d.flush()
print("sent WM_DELETE_WINDOW to", hex(target.id))
