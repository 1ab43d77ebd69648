// The local node after a crash (docs/real-node.md, "After a crash"): the e2e setup killed a node's
// process with SIGKILL while a pod ran on it, its daemons left running as orphans
// (node-recovery.ts), then started the suite's node, which found and undid what was left and
// reached Ready by itself. Here: the crash left something of every kind, the next start logged
// what it undid, and nothing of the killed run survived it. The teardown then checks the host is
// exactly as before both nodes.
import { describe, expect, inject, it } from 'vitest';

describe('the local node after a crash', () => {
  const r = inject('nodeRecovery');

  it('was left with orphaned daemons, pods, rules, interfaces, mounts and its journal', () => {
    const left = r.leftAfterCrash.join('\n');
    for (const daemon of ['containerd', 'containerd-shim', 'kubelet', 'kube-proxy', 'kube-router', 'kube-scheduler']) {
      expect(left, daemon).toMatch(new RegExp(`^processes \\+ \\d+ ${daemon}$`, 'm'));
    }
    expect(left).toMatch(/^processes \+ \d+ sleep \(in a pod cgroup\)$/m);
    expect(left).toMatch(/^iptables \+ ipv4 nat :HNC-NODE-API -$/m);
    expect(left).toMatch(/^iptables \+ ipv4 nat :KUBE-SERVICES -$/m);
    expect(left).toMatch(/^iptables \+ ipv4 filter :KUBE-ROUTER-/m);
    expect(left).toMatch(/^links \+ hnc0$/m);
    expect(left).toMatch(/^links \+ veth/m);
    expect(left).toMatch(/^netns \+ cni-/m);
    expect(left).toMatch(/^mounts \+ .*\/node\/containerd\/.*rootfs/m);
    expect(left).toMatch(/^cgroups \+ .*kubepods$/m);
    expect(left).toMatch(/^file ~ \/run\/hnc-ts-node: absent → /m);
  });

  it('was cleaned by the next start, which logged what it undid and reached Ready by itself', () => {
    const logged = r.recoveryLog.join('\n');
    expect(logged).toMatch(/a previous run \(process \d+\) ended without stopping/);
    // The daemons, the shims and, as the shims' children, the pods' processes.
    expect(logged).toMatch(/undone in [\d.]+ s: killed \d+ processes \([^)]*\bkubelet\b[^)]*\bcontainerd-shim\b[^)]*\bsleep\b/);
    expect(logged).toMatch(/unmounted \d+ mounts/);
    expect(logged).toMatch(/removed \d+ iptables chains/);
    expect(logged).toMatch(/deleted the bridge hnc0/);
    expect(logged).not.toMatch(/cleanup: .* failed/);
    // Nothing of the killed run (its processes, pod network namespaces, veths, container mounts) is left.
    expect(r.crashedStillThere).toEqual([]);
    expect(r.seconds.recoveryReady).toBeGreaterThan(0);
  });
});
