// shown is a text as the page shows it: the rule of engine/domain Shown, which the command
// line and watch use too (docs/dashboard.md "Text"). The API keeps every text as it was
// stored; the page writes each character that does not show, or that changes how the text
// around it reads (a right-to-left override, a zero-width space, a control character), as an
// escape such as <U+202E>. Newline and tab stay, and so does a carriage return that ends a
// line. Which characters those are comes from the server (hidden.js, generated from the Go
// rule), so the two cannot disagree.
import { hidden } from './hidden.js';

const escapes = new RegExp('\\r\\n|' + hidden.source, 'gu');

const escape = c => c === '\r\n' ? c : '<U+' + c.codePointAt(0).toString(16).toUpperCase().padStart(4, '0') + '>';

export function shown(text) {
  return String(text).replace(escapes, escape);
}
