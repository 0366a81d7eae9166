#!/usr/bin/env python3
"""What an operator hands the sample application (used by sdk/check.sh).

Usage: sample_settings.py DEPLOYMENT_DIR APP_DIR SENDER RECEIVER

Writes APP_DIR/sample.json (endpoints with their TLS pins, f, MAC epoch, routes of the deployment), copies the enrolment (public keys
only) and the application's own four private keys into APP_DIR/keys (owner-only), and takes SENDER and RECEIVER
off the agent's hosted ids in DEPLOYMENT_DIR/deployment.json, so that the agent and the application never hold
the same id.
"""
import json
import os
import shutil
import sys


def endpoint(url, pin):
    """An https:// endpoint carries the TLS key pin the deployment gives for it."""
    return {"url": url, "tlsPin": pin} if pin else {"url": url}


def main(dep, app, sender, receiver):
    with open(os.path.join(dep, "deployment.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    for agent in cfg.get("agents", []):
        agent["senders"] = [s for s in agent["senders"] if s != sender]
        agent["receivers"] = [r for r in agent["receivers"] if r != receiver]
    with open(os.path.join(dep, "deployment.json"), "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=2)

    keys = os.path.join(app, "keys")
    os.makedirs(keys, mode=0o700)
    for party in (f"sender-{sender}", f"receiver-{receiver}"):
        for kind in ("sign", "agree"):
            target = os.path.join(keys, f"{party}-{kind}.pem")
            shutil.copyfile(os.path.join(dep, cfg["keyDirectory"], f"{party}-{kind}.pem"), target)
            os.chmod(target, 0o600)
    shutil.copyfile(os.path.join(dep, cfg["enrolmentFile"]), os.path.join(app, "enrolment.json"))

    settings = {
        "deployment": {
            "f": cfg["f"],
            "macEpoch": cfg.get("macEpoch", 1),
            "preSqs": {str(p["id"]): endpoint(p["url"], p.get("tlsPin")) for p in cfg["preSqs"]},
            "replicas": {str(r["id"]): endpoint(r["apiUrl"], r.get("tlsPin")) for r in cfg["replicas"]},
            "enrolmentFile": "enrolment.json",
            "routes": [r for r in cfg.get("routes", []) if r["sender"] == sender],
        },
        "identity": {"senderId": sender, "receiverId": receiver, "keyDirectory": "keys", "stateDirectory": "state"},
        "run": {"messages": 200, "intervalMilliseconds": 150, "timeoutSeconds": 180},
    }
    with open(os.path.join(app, "sample.json"), "w", encoding="utf-8") as f:
        json.dump(settings, f, indent=2)


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
