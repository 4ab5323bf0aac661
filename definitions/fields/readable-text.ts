/**
 * Which texts people can read: the rule a pet's name and an API key's owner
 * share. It lives in definitions/ because the contracts (definitions/operations/)
 * state it in their schemas and the functions and the key tool apply it.
 */

/**
 * A character a person can see (a letter, mark, number, punctuation or symbol):
 * any character but whitespace, controls, format characters (U+200B, U+200D, a
 * BOM), lone surrogates, what Unicode calls ignorable in display (zero-width
 * characters, Hangul fillers, the combining grapheme joiner) and noncharacters.
 * Stated by exclusion so that characters newer than this runtime's Unicode
 * tables (next year's emoji) still count as visible, and so that the invisible
 * set is small and fixed enough to be listed character by character.
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
 * Why a text that people read (a pet's name, an API key's owner) is unfit to be
 * shown, or undefined when it is fine. Lengths are each caller's own rule.
 */
export function unreadableTextReason(text: string): string | undefined {
  if (!text.isWellFormed()) return 'must be valid Unicode text';
  if (!visibleCharacter.test(text)) return 'must contain at least one visible character (a letter, mark, number, punctuation or symbol)';
  if (controlCharacter.test(text)) return 'must not contain control characters';
  if (bidiControl.test(text)) return 'must not contain bidirectional override or isolate controls (U+202A–U+202E, U+2066–U+2069)';
  if (noncharacter.test(text)) return 'must not contain Unicode noncharacters (U+FDD0–U+FDEF, U+xFFFE, U+xFFFF)';
  return undefined;
}
