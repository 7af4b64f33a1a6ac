"""Prepares a moto server started with INITIAL_NO_AUTH_ACTION_COUNT=3 for the S3 tests.

Usage: moto_setup.py ENDPOINT BUCKET...
The three unauthenticated calls make an IAM user, its access key and a policy allowing s3:*;
then, signed with that key (so moto checks every signature from here on), the buckets are made.
Prints {"accessKeyID": ..., "secretAccessKey": ...}.
"""
import json
import sys

import botocore.session


def main() -> None:
    endpoint, buckets = sys.argv[1], sys.argv[2:]
    session = botocore.session.get_session()
    iam = session.create_client("iam", endpoint_url=endpoint, region_name="us-east-1",
                                aws_access_key_id="setup", aws_secret_access_key="setup")
    iam.create_user(UserName="osprey")
    key = iam.create_access_key(UserName="osprey")["AccessKey"]
    policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
    iam.put_user_policy(UserName="osprey", PolicyName="s3", PolicyDocument=json.dumps(policy))
    s3 = session.create_client("s3", endpoint_url=endpoint, region_name="us-east-1",
                               aws_access_key_id=key["AccessKeyId"], aws_secret_access_key=key["SecretAccessKey"])
    for bucket in buckets:
        s3.create_bucket(Bucket=bucket)
    json.dump({"accessKeyID": key["AccessKeyId"], "secretAccessKey": key["SecretAccessKey"]}, sys.stdout)


if __name__ == "__main__":
    main()
