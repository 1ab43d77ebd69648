// A Kubernetes list's JSON read item by item as it arrives: each item's namespace is known before
// it is parsed, and its metadata.managedFields are left out of the text that is parsed. A command
// that needs only some namespaces' objects (a preview, docs/kubectl-hns.md) then parses only those,
// while the API server is still sending the rest, and never builds the managedFields it would throw
// away. A cluster-wide list of RoleBindings is 16 MB for 22,000 objects (docs/benchmarks.md), half
// of it managedFields, sent over about 0.8 s: parsing it whole once it had arrived, and the garbage
// that left, was most of what the plugin spent reading it. The reader follows only the structure
// (brackets, strings, the keys `items`, `metadata`, `namespace` and `managedFields` where they
// belong); the items are parsed by JSON.parse.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

const ITEMS = Buffer.from('items');
const METADATA = Buffer.from('metadata');
const NAMESPACE = Buffer.from('namespace');
const MANAGED_FIELDS = Buffer.from('managedFields');

/** One item of a list, found but not parsed. */
export interface ListItem {
  /** metadata.namespace, or undefined (a cluster-scoped object). */
  readonly namespace: string | undefined;
  /** The item parsed, without metadata.managedFields. */
  parse(): unknown;
}

/** The list's own fields (kind, apiVersion, metadata), its items left out. */
export type ListHeader = { kind?: string; apiVersion?: string; metadata?: { resourceVersion?: string } } & Record<string, unknown>;

/** Whether the last string stringEnd() found held an escape. */
let escaped = false;

/**
 * The index of the quote closing the string whose opening quote is at `open`, or -1 when the
 * string goes on in the next chunk. A loop in JS: most strings in a list are short, and a native
 * indexOf per string costs more than it saves.
 */
function stringEnd(buf: Buffer, open: number): number {
  const n = buf.length;
  escaped = false;
  for (let j = open + 1; j < n; j++) {
    const c = buf[j];
    if (c === QUOTE) return j;
    if (c === BACKSLASH) {
      escaped = true;
      j++;
    }
  }
  return -1;
}

/** Whether the string from `open` to `close` (its quotes) is `key`; an escaped one (`"n\u0061mespace"`) is decoded first. */
const isKey = (buf: Buffer, open: number, close: number, key: Buffer, hasEscape: boolean): boolean =>
  hasEscape
    ? (JSON.parse(buf.toString('utf8', open, close + 1)) as string) === key.toString()
    : close - open - 1 === key.length && buf.compare(key, 0, key.length, open + 1, close) === 0;

const isSpace = (c: number | undefined): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/**
 * Reads a list (`{"kind":…,"items":[{…},…]}`, the API server's JSON, compact or not) chunk by
 * chunk: `push` each chunk as it arrives; each complete item is handed to `onItem` at once;
 * `end` returns the list's own fields. The text is taken to be JSON: JSON.parse of an item, or of
 * the header, throws if it is not.
 */
export class ListReader {
  /** Bytes not yet done with: the current item (or token) from its start, and what follows. */
  private buf: Buffer = Buffer.alloc(0);
  /** Where scanning resumes in buf. */
  private pos = 0;
  private readonly header: Buffer[] = [];
  /** The start in buf of header bytes not yet kept, or -1 inside the items array. */
  private headerFrom = 0;
  // Depth 1: the list; 2: its items array; 3: an item; 4: the item's metadata.
  private depth = 0;
  private readonly isObject: boolean[] = [];
  private expectKey = false;
  private key1 = '';
  private key3 = '';
  private key4 = '';
  private keyStart4 = -1;
  private itemsState: 'before' | 'in' | 'after' = 'before';
  private itemStart = -1;
  private inMetadata = false;
  private namespace: string | undefined;
  /** Where `"managedFields":[…]` is in the current item (its opening quote to past its bracket). */
  private cut: [number, number] | undefined;
  /** The start of a managedFields member whose value has not ended yet. */
  private managedStart = -1;

  constructor(private readonly onItem: (item: ListItem) => void) {}

  push(chunk: Buffer): void {
    // Positions are in this.buf, which the chunk extends.
    const buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const stop = this.scan(buf, this.pos);
    if (this.headerFrom >= 0) {
      this.header.push(buf.subarray(this.headerFrom, stop));
      this.headerFrom = stop;
    }
    // Keep from the current item's start, or from where scanning stopped; shift the positions kept.
    const keep = this.itemStart >= 0 ? this.itemStart : stop;
    this.buf = buf.subarray(keep);
    this.pos = stop - keep;
    if (this.headerFrom >= 0) this.headerFrom -= keep;
    if (this.itemStart >= 0) this.itemStart -= keep;
    if (this.keyStart4 >= 0) this.keyStart4 -= keep;
    if (this.managedStart >= 0) this.managedStart -= keep;
    if (this.cut) this.cut = [this.cut[0] - keep, this.cut[1] - keep];
  }

  end(): ListHeader {
    if (this.depth !== 0 || this.pos < this.buf.length) throw new SyntaxError('the list read from the server ends before its last bracket');
    return JSON.parse(Buffer.concat(this.header).toString('utf8')) as ListHeader;
  }

  /** Scans buf from `from`; returns where it stopped (buf's length, or the start of a string that goes on). */
  private scan(buf: Buffer, from: number): number {
    const n = buf.length;
    for (let i = from; i < n; i++) {
      const c = buf[i];
      if (c === QUOTE) {
        const close = stringEnd(buf, i);
        if (close < 0) return i;
        this.onString(buf, i, close, escaped);
        i = close;
        continue;
      }
      switch (c) {
        case OPEN_OBJECT:
        case OPEN_ARRAY:
          this.open(buf, i, c === OPEN_OBJECT);
          break;
        case CLOSE_OBJECT:
        case CLOSE_ARRAY:
          this.close(buf, i);
          break;
        case COMMA:
          this.expectKey = this.isObject[this.depth] === true;
          break;
        case COLON:
          this.expectKey = false;
          break;
      }
    }
    return n;
  }

  private onString(buf: Buffer, open: number, close: number, hasEscape: boolean): void {
    const depth = this.depth;
    if (this.expectKey) {
      if (depth === 1) this.key1 = isKey(buf, open, close, ITEMS, hasEscape) ? 'items' : '';
      else if (depth === 3) this.key3 = isKey(buf, open, close, METADATA, hasEscape) ? 'metadata' : '';
      else if (depth === 4 && this.inMetadata) {
        this.key4 = isKey(buf, open, close, NAMESPACE, hasEscape)
          ? 'namespace'
          : isKey(buf, open, close, MANAGED_FIELDS, hasEscape)
            ? 'managedFields'
            : '';
        this.keyStart4 = open;
      }
      this.expectKey = false;
    } else if (depth === 4 && this.inMetadata && this.key4 === 'namespace') {
      this.namespace = hasEscape ? (JSON.parse(buf.toString('utf8', open, close + 1)) as string) : buf.toString('utf8', open + 1, close);
    }
  }

  private open(buf: Buffer, i: number, object: boolean): void {
    const depth = ++this.depth;
    this.isObject[depth] = object;
    this.expectKey = object;
    if (depth === 2 && this.itemsState === 'before' && this.key1 === 'items' && !object) {
      this.itemsState = 'in';
      this.header.push(buf.subarray(this.headerFrom, i + 1));
      this.headerFrom = -1;
    } else if (depth === 3 && this.itemsState === 'in') {
      this.itemStart = i;
      this.namespace = undefined;
      this.cut = undefined;
      this.key3 = '';
    } else if (depth === 4 && this.itemStart >= 0 && this.key3 === 'metadata' && object) {
      this.inMetadata = true;
      this.key4 = '';
    } else if (depth === 5 && this.inMetadata && this.key4 === 'managedFields') this.managedStart = this.keyStart4;
  }

  private close(buf: Buffer, i: number): void {
    const depth = this.depth;
    if (depth === 5 && this.managedStart >= 0) {
      this.cut = [this.managedStart, i + 1]; // its comma is found once the whole item is here (emit)
      this.managedStart = -1;
    } else if (depth === 4 && this.inMetadata) this.inMetadata = false;
    else if (depth === 3 && this.itemStart >= 0) {
      this.emit(buf, this.itemStart, i + 1);
      this.itemStart = -1;
    } else if (depth === 2 && this.itemsState === 'in') {
      this.itemsState = 'after';
      this.headerFrom = i;
    }
    this.depth--;
    this.expectKey = false;
  }

  private emit(buf: Buffer, start: number, end: number): void {
    const cut = this.cut && memberCut(buf, this.cut[0], this.cut[1]);
    this.onItem({
      namespace: this.namespace,
      parse: () =>
        JSON.parse(
          cut ? buf.toString('utf8', start, cut[0]) + buf.toString('utf8', cut[1], end) : buf.toString('utf8', start, end),
        ) as unknown,
    });
  }
}

/** `"managedFields":[…]` from `start` (its opening quote) to `end`, with the comma before it, or else the one after it. */
function memberCut(buf: Buffer, start: number, end: number): [number, number] {
  let before = start - 1;
  while (isSpace(buf[before])) before--;
  if (buf[before] === COMMA) return [before, end];
  let after = end;
  while (isSpace(buf[after])) after++;
  return buf[after] === COMMA ? [start, after + 1] : [start, end];
}
