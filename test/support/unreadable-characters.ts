import fc from 'fast-check';

/** Characters nobody can see on their own: whitespace, zero-width and other format characters, fillers. */
export const invisibleCharacter = fc.constantFrom(
  ' ',
  '\u00a0',
  '\u2003',
  '\u3000',
  '\u200b',
  '\u200c',
  '\u200d',
  '\u2060',
  '\ufeff',
  '\u00ad',
  '\u034f',
  '\u3164',
  '\u115f',
  '\u180e',
  '\u{e0020}',
);

/** Characters never allowed in a name, wherever they stand: bidi override/isolate controls and noncharacters. */
export const forbiddenCharacter = fc
  .oneof(
    fc.integer({ min: 0x202a, max: 0x202e }),
    fc.integer({ min: 0x2066, max: 0x2069 }),
    fc.integer({ min: 0xfdd0, max: 0xfdef }),
    fc.integer({ min: 0, max: 16 }).map((plane) => plane * 0x10000 + 0xfffe),
    fc.integer({ min: 0, max: 16 }).map((plane) => plane * 0x10000 + 0xffff),
  )
  .map((codePoint) => String.fromCodePoint(codePoint));
