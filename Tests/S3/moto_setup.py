"""Prepares a moto server for the S3 tests.

Usage: moto_setup.py [--no-auth] ENDPOINT BUCKET[:public]...
Without --no-auth the server was started with INITIAL_NO_AUTH_ACTION_COUNT=3: the three
unauthenticated calls make an IAM user, its access key and a policy allowing s3:*; then, signed
with that key (so moto checks every signature from here on), the buckets are made.
With --no-auth (a server started without that variable: moto checks no signature, but still
applies bucket policies and object ACLs to unsigned requests) the buckets are made with a
placeholder key. A BUCKET:public bucket gets a policy letting anyone s3:GetObject its objects.
Prints {"accessKeyID": ..., "secretAccessKey": ...}.
"""
import json
import sys

import botocore.session


def main() -> None:
    no_auth = sys.argv[1] == "--no-auth"
    endpoint, buckets = sys.argv[1 + no_auth], sys.argv[2 + no_auth:]
    session = botocore.session.get_session()
    if no_auth:
        key = {"AccessKeyId": "anonymous-setup", "SecretAccessKey": "anonymous-setup"}
    else:
        iam = session.create_client("iam", endpoint_url=endpoint, region_name="us-east-1",
                                    aws_access_key_id="setup", aws_secret_access_key="setup")
        iam.create_user(UserName="osprey")
        key = iam.create_access_key(UserName="osprey")["AccessKey"]
        policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
        iam.put_user_policy(UserName="osprey", PolicyName="s3", PolicyDocument=json.dumps(policy))
    s3 = session.create_client("s3", endpoint_url=endpoint, region_name="us-east-1",
                               aws_access_key_id=key["AccessKeyId"], aws_secret_access_key=key["SecretAccessKey"])
    for bucket in buckets:
        name, _, mode = bucket.partition(":")
        s3.create_bucket(Bucket=name)
        if mode == "public":
            policy = {"Version": "2012-10-17", "Statement": [
                {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{name}/*"}]}
            s3.put_bucket_policy(Bucket=name, Policy=json.dumps(policy))
    json.dump({"accessKeyID": key["AccessKeyId"], "secretAccessKey": key["SecretAccessKey"]}, sys.stdout)


if __name__ == "__main__":
    main()
