import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { goQuote, parseGoQuery, parseGoRfc3339, trimGoSpace } from '../../../lib/spec/go-parse.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const LAYOUT = '"2006-01-02T15:04:05Z07:00"';

describe("Go's parsing of request values", () => {
    it("parses RFC 3339 as Go's time.Parse does, a fraction or a one-digit hour included", () => {
        expect(parseGoRfc3339('2024-01-02T03:04:05Z')).to.equal({ unixSeconds: 1704164645, isZero: false });
        expect(parseGoRfc3339('2024-01-02T3:04:05.999+01:00')).to.equal({ unixSeconds: 1704161045, isZero: false });
        expect(parseGoRfc3339('0001-01-01T01:00:00+01:00')).to.equal({ unixSeconds: -62135596800, isZero: true });
    });

    it("refuses what Go refuses, in Go's words", () => {
        const cases: Array<[string, string]> = [
            ['yesterday', `parsing time "yesterday" as ${LAYOUT}: cannot parse "yesterday" as "2006"`],
            ['2024-01-02 03:04:05Z', `parsing time "2024-01-02 03:04:05Z" as ${LAYOUT}: cannot parse " 03:04:05Z" as "T"`],
            ['2024-01-02T03:04:05', `parsing time "2024-01-02T03:04:05" as ${LAYOUT}: cannot parse "" as "Z07:00"`],
            ['2024-01-02T03:04:05Zx', 'parsing time "2024-01-02T03:04:05Zx": extra text: "x"'],
            ['2024-13-02T03:04:05Z', 'parsing time "2024-13-02T03:04:05Z": month out of range'],
            ['2023-02-29T03:04:05Z', 'parsing time "2023-02-29T03:04:05Z": day out of range'],
            ['2024-01-02T24:04:05Z', 'parsing time "2024-01-02T24:04:05Z": hour out of range'],
            ['2024-01-02T03:04:05+25:00', 'parsing time "2024-01-02T03:04:05+25:00": time zone offset hour out of range'],
            ['é', `parsing time "\\xc3\\xa9" as ${LAYOUT}: cannot parse "\\xc3\\xa9" as "2006"`],
        ];
        for (const [value, message] of cases) {
            expect(parseGoRfc3339(value), value).to.equal({ error: message });
        }
    });

    it('quotes as %q does, trims as strings.TrimSpace does, and reads a form as url.ParseQuery does', () => {
        expect(goQuote('a"b\\c\n\x07\x7f\u00a0é😀\u200b')).to.equal('"a\\"b\\\\c\\n\\a\\x7f\\u00a0é😀\\u200b"');
        expect(trimGoSpace('\u0085 a \ufeff')).to.equal('a \ufeff');
        const form = parseGoQuery('a=1&a=2&b=x+y%21&&c&%zz=1&d=4');
        expect([...form.values]).to.equal([
            ['a', ['1', '2']],
            ['b', ['x y!']],
            ['c', ['']],
            ['d', ['4']],
        ]);
        expect(form.error).to.equal('invalid URL escape "%zz"');
        expect(parseGoQuery('a=1;b=2').error).to.equal('invalid semicolon separator in query');
    });
});
