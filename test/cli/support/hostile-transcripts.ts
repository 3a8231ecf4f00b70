/*
 * A run tree whose every field is hostile: script tags, event handlers, `javascript:` links,
 * style that loads from the network, bidi overrides and control characters — in texts, tool
 * names, call ids, inputs, outputs, labels, agent types and the file name itself. Every
 * payload that could run sets `window.__pwned`, so a page shows it safely when that stays
 * unset.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inputDigest } from '../../../src/loop/input-digest.ts';
import type { RecordBody } from '../../../src/transcript/records.ts';
import { buildTranscript } from '../../support/transcripts.ts';

export const SCRIPT = '<script>window.__pwned=1</script>';
const IMG = '<img src=x onerror="window.__pwned=1">';
const BREAKOUT = `"><svg onload="window.__pwned=1"><a href='javascript:window.__pwned=1'>click</a>`;
const STYLE =
  '<style>body{background:url(https://evil.example/x)}</style><link rel=stylesheet href=https://evil.example/s.css>';
const BIDI = 'safe\u202etxt.exe\u202c \u2066iso\u2069 \u202aemb\u202b';
const CONTROL = 'bell\u0007 esc\u001b[2J nul\u0000 c1\u009b del\u007f';
/** What `String.prototype.replace` would expand in a replacement string: a page must show them as they are. */
export const DOLLARS = "$' $` $& $$";
/** Everything at once: what each field of the hostile transcript holds. */
export const HOSTILE = `${SCRIPT} ${IMG} ${BREAKOUT} ${STYLE} javascript:alert(1) ${BIDI} ${CONTROL} &amp; 'q' ${DOLLARS}`;
export const HOSTILE_FILE = `x"><svg onload=alert(1)>`;

export function hostileBodies(
  agentId: string,
  parent?: { transcript: string; callId: string },
): RecordBody[] {
  const input = { path: HOSTILE, content: HOSTILE, nested: [HOSTILE, { [HOSTILE]: HOSTILE }] };
  const tool = `write_file${IMG}`;
  const callId = `call_${SCRIPT}${DOLLARS}`;
  const longOutput = `${HOSTILE}\n`.repeat(40);
  return [
    {
      type: 'session-meta',
      agentId,
      agentType: HOSTILE,
      label: HOSTILE,
      model: 'test:model',
      ...(parent === undefined ? {} : { parent }),
    },
    { type: 'message', role: 'user', content: [{ type: 'text', text: HOSTILE }] },
    {
      type: 'message',
      role: 'assistant',
      content: [
        { type: 'reasoning', text: HOSTILE },
        { type: 'text', text: HOSTILE },
        { type: 'tool-call', callId: 'call_long', toolName: tool, input },
      ],
    },
    {
      type: 'tool-dispatched',
      callId: 'call_long',
      toolName: tool,
      inputDigest: inputDigest(input),
      idempotency: 'read-only',
    },
    {
      type: 'message',
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          callId: 'call_long',
          toolName: tool,
          output: longOutput,
          isError: false,
        },
      ],
    },
    { type: 'tool-settled', callId: 'call_long', status: 'completed' },
    { type: 'compaction', fromSeq: 1, toSeq: 1, summary: HOSTILE },
    {
      type: 'message',
      role: 'user',
      content: [{ type: 'text', text: HOSTILE }],
      extras: { injected: 'background' },
    },
    {
      type: 'message',
      role: 'assistant',
      content: [{ type: 'tool-call', callId, toolName: tool, input }],
    },
    {
      type: 'tool-dispatched',
      callId,
      toolName: tool,
      inputDigest: inputDigest(input),
      idempotency: 'side-effect',
    },
  ];
}

/**
 * The hostile tree in `folder`: `HOSTILE_FILE.jsonl`, a root whose last call (a side effect)
 * was in flight when its process died, and one child under `HOSTILE_FILE.agents/`. Returns
 * the root's path.
 */
export async function writeHostileTree(folder: string): Promise<string> {
  await mkdir(join(folder, `${HOSTILE_FILE}.agents`), { recursive: true });
  const root = join(folder, `${HOSTILE_FILE}.jsonl`);
  await writeFile(root, buildTranscript(hostileBodies('main')).bytes);
  await writeFile(
    join(folder, `${HOSTILE_FILE}.agents`, 'worker-1.jsonl'),
    buildTranscript(
      hostileBodies('worker-1', { transcript: `../${HOSTILE_FILE}.jsonl`, callId: 'call_long' }),
    ).bytes,
  );
  return root;
}
