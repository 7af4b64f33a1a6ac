"""The cluster check's upload phase (deploy/check_cluster.py `uploads`): thumbor's upload API on
instances sharing one `--upload-dir` (deploy/cluster.sh runs them with --upload --upload-put
--upload-delete), through nginx, which does not cache /image.

  - UPLOADS images POSTed through nginx (POST /image goes to the least busy instance), each
    `201` with `Location: /image/<id>/<name>`; the instance that took each is noted
    (X-Osprey-Upstream);
  - the instance that took the first upload is SIGKILLed; then every upload is read through nginx
    and from each surviving instance directly: GET /image/<id> gives the bytes POSTed, and a
    variant of a size not asked before (/unsafe/WxH/<id>) decodes at that size;
  - PUT through nginx replaces one upload (every survivor then answers the new bytes) and DELETE
    removes another (every survivor then answers 404, also for a new variant);
  - the killed instance is restarted and serves the uploads taken by the others.
"""
import collections
import os
import subprocess
import urllib.error
import urllib.request

LB = os.environ["LB_URL"]
INSTANCES = os.environ["INSTANCE_URLS"].split()
HERE = os.path.dirname(os.path.abspath(__file__))
UPLOADS = int(os.environ.get("UPLOADS", "12"))


def send(base, method, path, body=None, headers=None, timeout=60):
    request = urllib.request.Request(base + path, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def phase_uploads(names, origin_dir, report, fail, decode):
    """names: origin image file names (their bytes are uploaded); fail(msg) records a failure;
    decode(bytes) -> (width, height, loader) or None."""
    images = []
    for name in names[:UPLOADS]:
        with open(os.path.join(origin_dir, "img", name), "rb") as f:
            images.append((name, f.read()))
    uploads = []  # (id, name, bytes, instance that took it)
    for name, data in images:
        status, headers, body = send(LB, "POST", "/image", data, {"Slug": name, "Content-Type": "application/octet-stream"})
        location = headers.get("Location", "")
        parts = location.split("/")
        if status != 201 or len(parts) != 4 or parts[1] != "image" or len(parts[2]) != 32:
            fail(f"uploads: POST {name}: {status} Location {location!r} {body[:200]!r}")
            continue
        uploads.append((parts[2], name, data, headers.get("X-Osprey-Upstream", "?").split(", ")[-1]))
    if not uploads:
        fail("uploads: no upload was taken")
        return
    taken_by = collections.Counter(u[3] for u in uploads)
    victim = uploads[0][3]
    index = next((i for i, url in enumerate(INSTANCES, 1) if url.endswith("//" + victim)), None)
    if index is None:
        fail(f"uploads: the first upload's instance {victim} is not one of {INSTANCES}")
        return
    subprocess.run(["bash", os.path.join(HERE, "cluster.sh"), "kill", str(index)], check=True)
    survivors = [url for i, url in enumerate(INSTANCES, 1) if i != index]
    served = collections.Counter()

    def check_served(base, tag, upload, size):
        upload_id, name, data, _ = upload
        status, _, body = send(base, "GET", f"/image/{upload_id}")
        if status != 200 or body != data:
            fail(f"uploads: {tag} GET /image/{upload_id} ({name}): {status}, {'same' if body == data else 'other'} bytes")
            return
        w, h = size
        status, _, body = send(base, "GET", f"/unsafe/{w}x{h}/{upload_id}", headers={"Accept": "image/webp,*/*"})
        decoded = decode(body) if status == 200 else None
        if decoded is None or decoded[:2] != (w, h):
            fail(f"uploads: {tag} /unsafe/{w}x{h}/{upload_id} ({name}): {status}, decoded {decoded}")
            return
        served[tag] += 1

    for k, upload in enumerate(uploads):
        check_served(LB, "nginx", upload, (101 + k, 71))
        for n, base in enumerate(survivors):
            check_served(base, base.split("//")[1], upload, (111 + k + 10 * n, 81))
    after_kill = dict(served)

    # PUT the second upload with other bytes, DELETE the third, through nginx.
    changes = {}
    if len(uploads) >= 3:
        replaced, deleted = uploads[1], uploads[2]
        new = images[-1][1] if images[-1][1] != replaced[2] else images[0][1]
        status, _, body = send(LB, "PUT", f"/image/{replaced[0]}", new, {"Content-Type": "application/octet-stream"})
        changes["put_status"] = status
        status, _, _ = send(LB, "DELETE", f"/image/{deleted[0]}")
        changes["delete_status"] = status
        for base in [LB] + survivors:
            status, _, body = send(base, "GET", f"/image/{replaced[0]}")
            if status != 200 or body != new:
                fail(f"uploads: after PUT, {base} GET /image/{replaced[0]}: {status}, {'new' if body == new else 'old or other'} bytes")
            for path in (f"/image/{deleted[0]}", f"/unsafe/97x61/{deleted[0]}"):
                status, _, _ = send(base, "GET", path)
                if status != 404:
                    fail(f"uploads: after DELETE, {base} GET {path}: {status} (expected 404)")
        if changes["put_status"] != 204 or changes["delete_status"] != 204:
            fail(f"uploads: PUT {changes['put_status']}, DELETE {changes['delete_status']} through nginx (expected 204 each)")

    # The killed instance back: it serves what the others took.
    subprocess.run(["bash", os.path.join(HERE, "cluster.sh"), "start", str(index)], check=True, stdout=subprocess.DEVNULL)
    restarted = INSTANCES[index - 1]
    others = [u for u in uploads[3:] if u[3] != victim] or uploads[3:]
    for k, upload in enumerate(others):
        check_served(restarted, "restarted", upload, (121 + k, 91))
    report["uploads"] = {
        "posted": len(images), "taken": len(uploads), "taken_by_instance": dict(taken_by),
        "killed": victim, "served_after_kill (upload + fresh variant)": after_kill,
        "expected_per_server_after_kill": len(uploads), **changes,
        "served_by_restarted_instance": served["restarted"], "expected_restarted": len(others),
    }
    for tag, count in after_kill.items():
        if count != len(uploads):
            fail(f"uploads: {tag} served {count} of {len(uploads)} uploads after {victim} was killed")
    if served["restarted"] != len(others):
        fail(f"uploads: the restarted instance served {served['restarted']} of {len(others)} uploads")
