import { Revival } from '../src/revival/index.ts';
import { peek } from '../src/transcript/peek.ts';
import { Session } from '../src/transcript/session.ts';

/*
 * One library call on one path, in a process of its own, so that the attack that started it
 * can bound its time and memory (and kill it): `node attack/probe-child.ts OP PATH`, OP one of
 * `inspect`, `peek`, `open` (Session.open, then close), `revive` (Revival.revive, then close
 * the session without running it). Prints one JSON line: { op, outcome, detail }.
 */

const [op, path = ''] = process.argv.slice(2);
let outcome: string;
let detail = '';
try {
  if (op === 'inspect') {
    const found = await Revival.inspect({ path, maxRevivals: 3 });
    outcome = found.revivable ? 'revivable' : (found.reason ?? 'unknown');
    detail = found.detail ?? '';
  } else if (op === 'peek') {
    const read = await peek(path);
    outcome = read.ok ? read.state : read.reason;
    detail = read.ok ? `${read.records.length} records` : read.detail;
  } else if (op === 'open') {
    const session = await Session.open(path, { durability: 'none' });
    outcome = 'opened';
    await session.close();
  } else if (op === 'revive') {
    const found = await Revival.inspect({ path, maxRevivals: 3 });
    const revived = await Revival.revive({
      path,
      agentId: found.agentId ?? 'main',
      maxRevivals: 3,
    });
    outcome = revived.ok ? 'revived' : revived.reason;
    detail = revived.ok ? '' : revived.detail;
    if (revived.ok) await revived.session.close();
  } else {
    outcome = 'unknown-op';
  }
} catch (error) {
  outcome = 'threw';
  detail = String(error).split('\n')[0] ?? '';
}
process.stdout.write(`${JSON.stringify({ op, outcome, detail: detail.slice(0, 300) })}\n`);
process.exit(0);
