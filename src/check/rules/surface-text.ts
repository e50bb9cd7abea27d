/**
 * Text in a definition that a model reads but a person reviewing the server does not see, or that
 * speaks to the model rather than describing the tool: hidden characters, and instruction-like
 * phrases (tool poisoning). Offline, a short fixed pattern list: it catches the phrasings published
 * in tool-poisoning reports and misses paraphrases, other languages and text split across fields.
 */

/** Characters that render as nothing (or reorder what renders) in names and descriptions. */
const HIDDEN_CLASSES: readonly { label: string; test: (cp: number) => boolean }[] = [
  { label: 'tag characters', test: (cp) => cp >= 0xe0000 && cp <= 0xe007f },
  { label: 'bidi controls', test: (cp) => (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp === 0x200e || cp === 0x200f || cp === 0x061c },
  {
    label: 'zero-width characters',
    test: (cp) => (cp >= 0x200b && cp <= 0x200d) || (cp >= 0x2060 && cp <= 0x2064) || cp === 0xfeff || cp === 0x180e || cp === 0xad,
  },
  { label: 'variation selectors', test: (cp) => cp >= 0xe0100 && cp <= 0xe01ef },
  { label: 'control characters', test: (cp) => (cp < 0x20 && cp !== 0x09 && cp !== 0x0a && cp !== 0x0d) || (cp >= 0x7f && cp <= 0x9f) },
];

/** A joiner between two emoji builds one emoji (a family, a flag): not hidden text. */
const EMOJI_ZWJ = /(?<=\p{Extended_Pictographic}\uFE0F?)\u200D(?=\p{Extended_Pictographic})/gu;

export interface HiddenText {
  /** Which classes occur, e.g. `tag characters, bidi controls`. */
  classes: string[];
  /** The first few code points, as `U+E0049`. */
  codePoints: string[];
  count: number;
  /** What tag characters spell (U+E0020-U+E007E mirror ASCII): the smuggled text itself. */
  tagText?: string;
}

const hex = (cp: number) => `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;

/** The hidden characters of `text`, or undefined when it has none. */
export function hiddenCharacters(text: string): HiddenText | undefined {
  const classes = new Set<string>();
  const codePoints: string[] = [];
  let count = 0;
  let tagText = '';
  for (const ch of text.replace(EMOJI_ZWJ, '')) {
    const cp = ch.codePointAt(0)!;
    const cls = HIDDEN_CLASSES.find((c) => c.test(cp));
    if (!cls) continue;
    classes.add(cls.label);
    if (codePoints.length < 5) codePoints.push(hex(cp));
    count++;
    if (cp >= 0xe0020 && cp <= 0xe007e) tagText += String.fromCodePoint(cp - 0xe0000);
  }
  if (count === 0) return undefined;
  return { classes: [...classes], codePoints, count, ...(tagText ? { tagText } : {}) };
}

/** Phrases that address the model, not describe the tool. Each is a known tool-poisoning shape. */
export const INSTRUCTION_PATTERNS: readonly { label: string; re: RegExp }[] = [
  {
    label: 'asks the model to ignore its instructions',
    re: /\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:the\s+|your\s+)?(?:previous|prior|above|earlier|preceding|system|other)\s+(?:instructions?|prompts?|messages|rules|guidelines|directions)/i,
  },
  {
    label: 'asks the model to keep something from the user',
    re: /\b(?:do\s+not|don'?t|never|without)\s+(?:tell(?:ing)?|inform(?:ing)?|mention(?:ing)?|reveal(?:ing)?|disclos(?:e|ing)|notify(?:ing)?|alert(?:ing)?|show(?:ing)?)\b[^.]{0,40}?\b(?:the\s+)?(?:user|human)s?\b/i,
  },
  { label: 'an <IMPORTANT>-style tag aimed at the model', re: /<\/?\s*(?:important|system|instructions?|secret|hidden|admin)\s*>/i },
  {
    label: 'a side task before the tool is used',
    re: /\b(?:before|prior\s+to)\s+(?:using|calling|invoking|running)\s+(?:this|any|the)\s+(?:tool|function)\b[^.]{0,100}?\b(?:read|send|pass|include|upload|fetch|call|provide)\b/i,
  },
  { label: 'announces new instructions', re: /\b(?:new|updated|additional|real)\s+instructions\s*:|\byou\s+are\s+now\b|\bfrom\s+now\s+on\b/i },
  {
    label: 'asks for secrets or the conversation',
    re: /\b(?:system\s+prompt|conversation\s+history|api[\s_-]?keys?|ssh\s+keys?|id_rsa|credentials)\b[^.]{0,60}?\b(?:send|pass|include|append|upload|forward|as\s+(?:the\s+)?(?:argument|parameter))/i,
  },
];

export interface InstructionHit {
  label: string;
  /** The matched phrase, shortened. */
  excerpt: string;
}

/** Instruction-like phrases in `text` (hidden characters removed first, tag characters' text included). */
export function instructionText(text: string): InstructionHit[] {
  const hidden = hiddenCharacters(text);
  const visible = [...text].filter((ch) => !HIDDEN_CLASSES.some((c) => c.test(ch.codePointAt(0)!))).join('');
  const haystack = (hidden?.tagText ? `${visible}\n${hidden.tagText}` : visible).replace(/\s+/g, ' ');
  return INSTRUCTION_PATTERNS.flatMap(({ label, re }) => {
    const m = re.exec(haystack);
    return m ? [{ label, excerpt: m[0].length > 80 ? `${m[0].slice(0, 77)}...` : m[0] }] : [];
  });
}

/** Fields that reach the model as prose: scanned for instruction-like text. */
const PROSE_KEYS = new Set(['name', 'title', 'description']);

export interface TextField {
  /** JSON Pointer from the definition's root. */
  pointer: string;
  text: string;
  /** The text is a member name, not a value (hidden characters only). */
  isKey: boolean;
  /** A name, title or description: prose the model reads. */
  isProse: boolean;
}

export const escapePointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** Every string of a definition, and every member name, with its pointer. */
export function* textFields(value: unknown, pointer = ''): Generator<TextField> {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) yield* textFields(value[i], `${pointer}/${i}`);
  } else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      const at = `${pointer}/${escapePointer(k)}`;
      yield { pointer: at, text: k, isKey: true, isProse: false };
      if (typeof v === 'string') yield { pointer: at, text: v, isKey: false, isProse: PROSE_KEYS.has(k) };
      else yield* textFields(v, at);
    }
  }
}
