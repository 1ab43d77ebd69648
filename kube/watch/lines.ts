// Splits a byte stream into lines. A watch body is newline-delimited JSON, and the network cuts it
// anywhere: inside a line, or inside a multi-byte UTF-8 character (StringDecoder holds those back).
import { StringDecoder } from 'node:string_decoder';

export class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private partial = '';

  /** Feeds a chunk; returns the non-blank lines it completed. */
  push(chunk: Buffer | string): string[] {
    const text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    const lines: string[] = [];
    let start = 0;
    // Scan only the new text, so a large object arriving in many chunks costs O(n), not O(n²).
    for (let nl = text.indexOf('\n', start); nl >= 0; nl = text.indexOf('\n', start)) {
      const line = this.partial + text.slice(start, nl);
      this.partial = '';
      if (line.trim() !== '') lines.push(line);
      start = nl + 1;
    }
    this.partial += text.slice(start);
    return lines;
  }

  /** What is left after the stream ended: a line the server never finished, or ''. */
  end(): string {
    const rest = this.partial + this.decoder.end();
    this.partial = '';
    return rest.trim();
  }
}
