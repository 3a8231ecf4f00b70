import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { INTERRUPTED_MESSAGE } from '../../src/revival/index.ts';
import { conversationView } from '../../src/transcript/conversation-view.ts';
import { peek } from '../../src/transcript/peek.ts';
import { FIXTURE, runCli } from './support/cli-fixtures.ts';
import { fixtureFolder } from './support/fixture-folder.ts';

/*
 * A child whose last line — the durable dispatch of its `write_file` — has a flipped bit: not
 * a torn tail (it ends in its newline), so `status` calls it unreadable, saying it may be a
 * durable record and how to salvage it; `revive --salvage` asks (or takes --yes) before it
 * writes, then moves the line to a sidecar and answers the call as interrupted, never run.
 */

const CHILD = `runs/main.agents/${FIXTURE.interruptedChild}.jsonl`;

async function flipLastLine(folder: string): Promise<Buffer> {
  const path = join(folder, CHILD);
  const bytes = await readFile(path);
  const lastStart = bytes.lastIndexOf(0x0a, bytes.length - 2) + 1;
  assert.match(bytes.subarray(lastStart).toString(), /"type":"tool-dispatched"/);
  const at = lastStart + 30;
  bytes[at] = (bytes[at] ?? 0) ^ 0x04;
  await writeFile(path, bytes);
  return bytes;
}

describe('llm-agent revive --salvage', () => {
  const fixture = fixtureFolder({ agents: true });

  test('status names the damaged line and the way out; --salvage off a terminal without --yes writes nothing', async () => {
    const damaged = await flipLastLine(fixture.path);
    const status = await runCli(['status', 'runs'], { cwd: fixture.path });
    assert.match(status.stdout + status.stderr, /may be a durable record/);
    assert.match(status.stdout + status.stderr, /--salvage/);
    const refused = await runCli(
      ['revive', 'runs/main.jsonl', '--agents', 'agents.ts', '--salvage'],
      {
        cwd: fixture.path,
      },
    );
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stdout, /Salvage \(--salvage\):/);
    assert.match(refused.stderr, /nobody can confirm the salvage/);
    assert.ok((await readFile(join(fixture.path, CHILD))).equals(damaged), 'the file was changed');
  });

  test('--salvage --yes moves the damaged line to a sidecar and answers the call as interrupted', async () => {
    const result = await runCli(
      ['revive', 'runs/main.jsonl', '--agents', 'agents.ts', '--salvage', '--yes'],
      { cwd: fixture.path },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /salvaged .*worker-call_s2\.jsonl from line 4/);
    const sidecars = (await readdir(join(fixture.path, 'runs/main.agents'))).filter((name) =>
      name.startsWith(`${FIXTURE.interruptedChild}.jsonl.torn-`),
    );
    assert.equal(sidecars.length, 1, sidecars.join(', '));
    const child = await peek(join(fixture.path, CHILD));
    assert.ok(child.ok, child.ok ? '' : child.detail);
    const repair = child.records.find((record) => record.tailRepair !== undefined)?.tailRepair;
    assert.deepEqual(
      { possiblyDispatched: repair?.possiblyDispatched, wholeLines: repair?.wholeLines },
      { possiblyDispatched: true, wholeLines: 1 },
    );
    const answers = conversationView(child.records).flatMap((message) =>
      message.content.filter(
        (part) => part.type === 'tool-result' && part.callId === FIXTURE.writeCall,
      ),
    );
    assert.equal(answers.length, 1);
    assert.deepEqual(
      answers.map((part) => (part.type === 'tool-result' ? part.output : null)),
      [INTERRUPTED_MESSAGE],
    );
    // Never run again: no second dispatch of the call.
    assert.equal(
      child.records.filter(
        (record) => record.type === 'tool-dispatched' && record.callId === FIXTURE.writeCall,
      ).length,
      0,
    );
  });
});
