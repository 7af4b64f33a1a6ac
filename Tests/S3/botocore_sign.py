"""Signs requests with botocore's S3SigV4Auth at a fixed time, for SigV4SignerTests.

Usage: botocore_sign.py REQUESTS.json
REQUESTS.json: {"date": "yyyymmddThhmmssZ", "requests": [{"method", "url", "headers": {..}, "body",
"accessKeyID", "secretAccessKey", "sessionToken" (or null), "region"}]}
Prints a JSON list, one {"authorization", "contentSHA256", "headers"} per request: what botocore
signed, so the Swift signer can be given the same headers and payload hash.
"""
import datetime
import json
import sys

import botocore.auth
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        spec = json.load(f)
    fixed = datetime.datetime.strptime(spec["date"], "%Y%m%dT%H%M%SZ")
    # botocore reads the clock through get_current_datetime (older releases: datetime.utcnow).
    if hasattr(botocore.auth, "get_current_datetime"):
        botocore.auth.get_current_datetime = lambda *args, **kwargs: fixed
    else:
        class _Clock(datetime.datetime):
            @classmethod
            def utcnow(cls):
                return fixed
        botocore.auth.datetime.datetime = _Clock
    out = []
    for r in spec["requests"]:
        request = AWSRequest(method=r["method"], url=r["url"], headers=r["headers"], data=r["body"].encode())
        credentials = Credentials(r["accessKeyID"], r["secretAccessKey"], r.get("sessionToken"))
        S3SigV4Auth(credentials, "s3", r["region"]).add_auth(request)
        out.append({
            "authorization": request.headers["Authorization"],
            "contentSHA256": request.headers["X-Amz-Content-SHA256"],
            "headers": {k: v for k, v in request.headers.items()},
        })
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
