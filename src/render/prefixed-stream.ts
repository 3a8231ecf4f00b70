import { Writable } from 'node:stream';

/**
 * A stream that writes each line it is given to `target` with `prefix` in front: how the demo
 * shows a command's output inside its narration. A last line without a newline is held until
 * the next write or `end()`. It passes its text through unchanged, colour codes included: what
 * it is given is our own output (the demo's `llm-agent run` child, whose strings from the model
 * are already made safe for a terminal).
 *
 * @example
 * const indented = prefixedStream(process.stdout, '  │ ');
 * indented.write('a\nb\n'); // '  │ a\n  │ b\n'
 */
export function prefixedStream(target: NodeJS.WritableStream, prefix: string): Writable {
  let pending = '';
  return new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) target.write(line === '' ? '\n' : `${prefix}${line}\n`);
      done();
    },
    final(done) {
      if (pending !== '') target.write(`${prefix}${pending}\n`);
      pending = '';
      done();
    },
  });
}
