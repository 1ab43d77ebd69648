// Which namespaces HNC manages, and which namespace labels and annotations it manages
// (docs/behaviour.md §3.1, §3.5; manager flags --excluded-namespace, --included-namespace-regex,
// --managed-namespace-label, --managed-namespace-annotation).
import { DEFAULT_EXCLUDED_NAMESPACES, DEFAULT_HNC_NAMESPACE, GROUP } from '../api/constants.js';

export interface PolicyOptions {
  excludedNamespaces?: readonly string[];
  /** Matched against the whole name (implicitly ^...$). */
  includedNamespaceRegex?: string;
  managedLabels?: readonly string[];
  managedAnnotations?: readonly string[];
  /** HNC's own namespace, always excluded. */
  hncNamespace?: string;
}

export class PolicyError extends Error {
  override name = 'PolicyError';
}

const anchored = (re: string, what: string): RegExp => {
  try {
    return new RegExp(`^(?:${re})$`);
  } catch (err) {
    throw new PolicyError(`${what} ${JSON.stringify(re)} is not a valid regular expression: ${(err as Error).message}`);
  }
};

export class HierarchyPolicy {
  readonly excluded: ReadonlySet<string>;
  readonly includedRegex: RegExp;
  private readonly includedSource: string;
  private readonly labelRegexes: RegExp[];
  private readonly annotationRegexes: RegExp[];

  /** The options it was made from: plain data, to make the same policy in another thread (the admission worker). */
  readonly options: PolicyOptions;

  constructor(opts: PolicyOptions = {}) {
    this.options = opts;
    const hncNamespace = opts.hncNamespace ?? DEFAULT_HNC_NAMESPACE;
    this.excluded = new Set([...(opts.excludedNamespaces ?? DEFAULT_EXCLUDED_NAMESPACES), hncNamespace]);
    this.includedSource = opts.includedNamespaceRegex ?? '.*';
    this.includedRegex = anchored(this.includedSource, '--included-namespace-regex');
    const managed = (list: readonly string[] | undefined, flag: string) =>
      (list ?? []).map((re) => {
        const r = anchored(re, flag);
        // A regex that matches HNC's own keys would strip or rewrite HNC's bookkeeping.
        const own = [
          GROUP,
          `${GROUP}/included-namespace`,
          `${GROUP}/subnamespace-of`,
          `${GROUP}/managed-by`,
          `default.tree.${GROUP}/depth`,
        ].find((k) => r.test(k));
        if (own !== undefined) throw new PolicyError(`${flag} "${re}" may not match "${own}", which HNC itself manages`);
        return r;
      });
    this.labelRegexes = managed(opts.managedLabels, '--managed-namespace-label');
    this.annotationRegexes = managed(opts.managedAnnotations, '--managed-namespace-annotation');
  }

  /** The empty name (no parent) counts as managed. */
  isManaged(ns: string): boolean {
    if (ns === '') return true;
    return !this.excluded.has(ns) && this.includedRegex.test(ns);
  }

  /** Why a namespace is not managed, in HNC's words; undefined if it is managed. */
  whyUnmanaged(ns: string): string | undefined {
    if (this.isManaged(ns)) return undefined;
    if (this.excluded.has(ns)) return 'excluded by the HNC administrator';
    return `does not match the regex set by the HNC administrator: \`^${this.includedSource}$\``;
  }

  isManagedLabel(key: string): boolean {
    return this.labelRegexes.some((r) => r.test(key));
  }

  isManagedAnnotation(key: string): boolean {
    return this.annotationRegexes.some((r) => r.test(key));
  }
}
