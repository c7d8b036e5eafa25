#!/usr/bin/env bash
# Makes bubblewrap usable for `spelunk audit --sandbox required` on a GitHub-hosted runner: installs the Debian/Ubuntu
# package when bwrap is missing, then proves it works with a trivial run. Ubuntu 24.04 restricts unprivileged user
# namespaces through AppArmor (kernel.apparmor_restrict_unprivileged_userns=1), which bwrap needs; on such a runner the
# restriction is lifted for this job's virtual machine only. Fails the step when bwrap still cannot run: the audit would
# refuse to start anyway (fail closed), and this says why.
set -euo pipefail

probe() {
  bwrap --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 \
    --dev /dev --unshare-all --die-with-parent --new-session --clearenv /usr/bin/true 2>/dev/null
}

if ! command -v bwrap >/dev/null 2>&1; then
  sudo apt-get update -qq
  sudo apt-get install -y -qq bubblewrap >/dev/null
fi
if probe; then
  echo "spelunk-action: bubblewrap works ($(bwrap --version))"
  exit 0
fi
if [ "$(sysctl -n kernel.apparmor_restrict_unprivileged_userns 2>/dev/null || echo 0)" = "1" ]; then
  sudo sysctl -q -w kernel.apparmor_restrict_unprivileged_userns=0
fi
if probe; then
  echo "spelunk-action: bubblewrap works after allowing unprivileged user namespaces"
  exit 0
fi
echo "::error::spelunk-action: bubblewrap cannot create a sandbox on this runner (user namespaces unavailable); spelunk audit --sandbox required would refuse to run"
exit 1
