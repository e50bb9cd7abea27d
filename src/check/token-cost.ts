/**
 * What a tool definition costs a model's context, in tokens. The encoding is `o200k_base`: the
 * tokenizer of OpenAI's current models (GPT-4o, o-series, GPT-4.1, GPT-5), the most widely used
 * public BPE; other vendors' tokenizers differ by a few tens of percent, so the figures are
 * estimates that stand in for them and are comparable across builds, not a bill.
 */
import { createRequire } from 'node:module';

export const TOKEN_ENCODING = 'o200k_base';

type Encoding = typeof import('gpt-tokenizer/encoding/o200k_base');

// Loaded on first use: the BPE ranks take about half a second to load, which a tap started with
// `--check` rules that count no tokens should not pay.
let encoding: Encoding | undefined;
function tokenizer(): Encoding {
  encoding ??= createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as Encoding;
  return encoding;
}

/** Tokens of `text` under {@link TOKEN_ENCODING}. */
export function countTokens(text: string): number {
  return tokenizer().countTokens(text);
}

/** Tokens of a definition (tool, prompt, resource) as sent: its compact JSON, as a client forwards it to a model. */
export function definitionTokens(definition: unknown): number {
  return countTokens(JSON.stringify(definition) ?? '');
}
