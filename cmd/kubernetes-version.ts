// The Kubernetes versions hnc-ts supports, and what it says at start on any other (docs/deploy.md,
// "Supported Kubernetes versions"). Each supported minor is proven by `npm run test:matrix`.
/** The supported minors of Kubernetes 1.x, oldest and newest (CI tests both ends). */
export const SUPPORTED_MINORS = { oldest: 34, newest: 37 } as const;
/**
 * Below this, an API HNC cannot do without is missing: webhook matchConditions (GA in 1.30), which
 * keep HNC's own writes and ordinary writes away from its webhooks, and SelfSubjectReview (1.28).
 */
export const REQUIRED_MINOR = 30;

export type VersionVerdict = { kind: 'supported' } | { kind: 'warn'; message: string } | { kind: 'refuse'; message: string };

/** What to do on the API server's /version (minor may carry a suffix: "34+" on some providers). */
export function judgeVersion(v: { major?: string; minor?: string; gitVersion?: string }): VersionVerdict {
  const major = Number(v.major);
  const minor = Number.parseInt(v.minor ?? '', 10);
  const shown = v.gitVersion ?? `${v.major}.${v.minor}`;
  const range = `1.${SUPPORTED_MINORS.oldest} to 1.${SUPPORTED_MINORS.newest}`;
  if (major !== 1 || !Number.isInteger(minor))
    return { kind: 'warn', message: `cannot tell the Kubernetes version (${shown}); hnc-ts supports ${range}` };
  if (minor < REQUIRED_MINOR)
    return {
      kind: 'refuse',
      message: `Kubernetes ${shown} is too old: hnc-ts needs 1.${REQUIRED_MINOR} or newer (webhook matchConditions, SelfSubjectReview) and supports ${range}`,
    };
  if (minor < SUPPORTED_MINORS.oldest || minor > SUPPORTED_MINORS.newest)
    return {
      kind: 'warn',
      message: `Kubernetes ${shown} is outside the versions hnc-ts is tested on (${range}); it should work, but is not proven there`,
    };
  return { kind: 'supported' };
}
