import { replaceSection } from '../../bench/support/results';

/** `npm run bench -- --readme` rewrites the README's Performance section and nothing else. */
const readme = ['# Pet Store', '', '## Performance', '', 'old table', '', '## Tests', '', 'npm test', ''].join('\n');

it('replaces the Performance section up to the next section, keeping what is before and after', () => {
  expect(replaceSection(readme, '## Performance', '## Performance\n\nnew table\n\n')).toBe(
    ['# Pet Store', '', '## Performance', '', 'new table', '', '## Tests', '', 'npm test', ''].join('\n'),
  );
});

it('replaces a last section to the end of the document', () => {
  expect(replaceSection('# A\n\n## Performance\n\nold\n', '## Performance', '## Performance\n\nnew\n')).toBe(
    '# A\n\n## Performance\n\nnew\n',
  );
});

it('refuses a document without the section rather than append one somewhere', () => {
  expect(() => replaceSection('# A\n\n## Tests\n', '## Performance', '## Performance\n')).toThrow('no "## Performance" section');
});
