/**
 * The reconcile answers of a plan as text, for a revive run by someone else: the web view asks
 * the reconciles when it shows a plan, and its Confirm hands exactly those answers to the
 * `llm-agent revive --yes --reconciled-stdin` it starts, so that what the page showed is what
 * the revival records.
 *
 * @module
 */
import { z } from 'zod';
import type { Reconciliation } from '../revival/index.ts';
import type { JsonValue } from '../transcript/records.ts';
import type { PlanReconciliations } from './reconcile-plan.ts';
import { UserError } from './user-error.ts';

/** The version of the text below; a reader refuses another. */
const VERSION = 1;

/** The most a revive reads of it (outputs included). */
const MAX_RECONCILED_INPUT_BYTES = 16 * 1024 * 1024;

const answerSchema = z.strictObject({
  callId: z.string().min(1),
  toolName: z.string().min(1),
  idempotencyKey: z.string().min(1),
  answer: z.enum(['completed', 'did-not-happen', 'unknown']),
  output: z.json().optional(),
  isError: z.boolean().optional(),
  detail: z.string().optional(),
});

const inputSchema = z.strictObject({
  version: z.literal(VERSION),
  runs: z.array(z.strictObject({ path: z.string().min(1), answers: z.array(answerSchema) })),
});

/**
 * The answers as the text a revive reads. Pure.
 *
 * @example
 * child.stdin.end(reconciledInputText(answers));
 */
export function reconciledInputText(answers: PlanReconciliations): string {
  const runs = [...answers].map(([path, reply]) => ({ path, answers: reply }));
  return `${JSON.stringify({ version: VERSION, runs })}\n`;
}

/**
 * The answers read back from that text, checked: anything else is a {@link UserError} naming
 * `source` and what is wrong (nothing has been written then). A `completed` answer must carry
 * its output. Each answer is used by the revive only for the open dispatch with its call id and
 * key, like any reconcile's.
 *
 * @example
 * const answers = parseReconciledInput(text, 'stdin');
 */
export function parseReconciledInput(text: string, source: string): PlanReconciliations {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UserError(
      `revive: ${source}: the reconcile answers are not JSON (${(error as Error).message})`,
    );
  }
  const parsed = inputSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined ? '' : ` at ${issue.path.join('.') || 'the top'}`;
    throw new UserError(
      `revive: ${source}: not reconcile answers of version ${VERSION}${where}: ${issue?.message ?? 'invalid'}`,
    );
  }
  const answers = new Map<string, Reconciliation[]>();
  for (const run of parsed.data.runs) {
    const reply = run.answers.map((answer, index) => {
      if (answer.answer === 'completed' && answer.output === undefined) {
        throw new UserError(
          `revive: ${source}: runs.${run.path}.answers.${index}: a completed answer needs its output`,
        );
      }
      return withoutUndefined(answer);
    });
    answers.set(run.path, [...(answers.get(run.path) ?? []), ...reply]);
  }
  return answers;
}

function withoutUndefined(answer: z.infer<typeof answerSchema>): Reconciliation {
  const { output, isError, detail, ...rest } = answer;
  return {
    ...rest,
    ...(output === undefined ? {} : { output: output as JsonValue }),
    ...(isError === undefined ? {} : { isError }),
    ...(detail === undefined ? {} : { detail }),
  };
}

/**
 * Read a stream to its end, refusing one longer than {@link MAX_RECONCILED_INPUT_BYTES}.
 *
 * @example
 * const text = await readBoundedText(process.stdin, 'stdin');
 */
export async function readBoundedText(
  stream: AsyncIterable<Buffer | string>,
  source: string,
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += bytes.length;
    if (size > MAX_RECONCILED_INPUT_BYTES) {
      throw new UserError(
        `revive: ${source}: the reconcile answers pass ${MAX_RECONCILED_INPUT_BYTES} bytes`,
      );
    }
    chunks.push(bytes);
  }
  return Buffer.concat(chunks).toString('utf8');
}
