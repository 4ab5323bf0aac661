/**
 * Which texts people can read: the rule a pet's name and an API key's owner
 * share. It lives in definitions/ because the contracts (definitions/operations/)
 * state it in their schemas and the functions and the key tool apply it.
 */

/**
 * A character a person can see: any character but whitespace, controls, format
 * characters (U+200B, U+200D, a BOM), lone surrogates, what Unicode calls
 * ignorable in display (zero-width characters, Hangul fillers, the combining
 * grapheme joiner) and noncharacters. So a letter, mark, number, punctuation or
 * symbol, and also a private-use code point (U+E000–U+F8FF, planes 15 and 16: it
 * shows in the font that defines it, such as a vendor's logo or a CJK character
 * not yet encoded, and the service cannot know the reader's fonts) and a code
 * point this runtime's Unicode tables do not assign (U+0378 today: it may be a
 * character newer than them, such as next year's emoji). Stated by exclusion
 * for those reasons, and so that the invisible set is small and fixed enough to
 * be listed character by character (docs/decisions.md, decision 2).
 */
export const visibleCharacter = /[^\p{White_Space}\p{Cc}\p{Cf}\p{Cs}\p{Default_Ignorable_Code_Point}\p{Noncharacter_Code_Point}]/u;
export const controlCharacter = /\p{Cc}/u;
/**
 * Bidirectional embedding, override and isolate controls (U+202A–U+202E,
 * U+2066–U+2069) make a name display as something else (`abc\u202Eexe.txt`
 * shows as `abctxt.exe`).
 */
export const bidiControl = /[\u202A-\u202E\u2066-\u2069]/u;
/** Noncharacters (U+FDD0–U+FDEF and U+xFFFE/U+xFFFF of every plane) are for a program's internal use, never for text. */
export const noncharacter = /\p{Noncharacter_Code_Point}/u;

/**
 * How long a text is as the contract counts it: in Unicode code points, as JSON
 * Schema's maxLength does (String.length counts UTF-16 units: two for an emoji).
 */
export function characterCount(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/**
 * The whole rule for a text people read (a pet's name, an API key's owner):
 * why it is unfit, or undefined. Each field names its own maximum; the rest is
 * shared, wording included.
 */
export function readableTextReason(text: string, maxCharacters: number): string | undefined {
  return unreadableTextReason(text) ?? (characterCount(text) > maxCharacters ? `must be at most ${maxCharacters} characters` : undefined);
}

/** Why a text that people read is unfit to be shown, whatever its length, or undefined when it is fine. */
export function unreadableTextReason(text: string): string | undefined {
  if (!text.isWellFormed()) return 'must be valid Unicode text';
  if (!visibleCharacter.test(text)) return 'must contain at least one visible character (a letter, mark, number, punctuation or symbol)';
  if (controlCharacter.test(text)) return 'must not contain control characters';
  if (bidiControl.test(text)) return 'must not contain bidirectional override or isolate controls (U+202A–U+202E, U+2066–U+2069)';
  if (noncharacter.test(text)) return 'must not contain Unicode noncharacters (U+FDD0–U+FDEF, U+xFFFE, U+xFFFF)';
  return undefined;
}
