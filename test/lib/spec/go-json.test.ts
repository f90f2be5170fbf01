import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { decodeGoJson } from '../../../lib/spec/go-json.ts';
import { readSwagger } from '../../../lib/spec/git-loader.ts';
import { SchemaConverter } from '../../../lib/spec/schema-to-joi.ts';
import { GIT_SWAGGER_FILE } from '../../../server.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const converter = new SchemaConverter(readSwagger(GIT_SWAGGER_FILE).definitions);
const decode = (definition: string, text: string) => decodeGoJson(Buffer.from(text), { $ref: `#/definitions/${definition}` }, converter);

describe("Go's JSON decoding of a request body", () => {
    it('decodes as json.Decoder does: any key case, unknown keys, `null` and what follows the first value ignored', () => {
        expect(decode('CreateOrgOption', '{"USERNAME": "a", "nope": 1, "full_name": null, "username": "b"} trailing')).to.equal({
            username: 'b',
        });
        expect(decode('CreateOrgOption', ' \n')).to.equal({});
        expect(decode('CreateIssueOption', '{"labels": [1, null], "due_date": "2024-01-02T03:04:05Z"}')).to.equal({
            labels: [1, 0],
            due_date: '2024-01-02T03:04:05Z',
        });
    });

    it("refuses malformed JSON in the scanner's words", () => {
        const cases: Array<[string, string]> = [
            ['{"a": ', 'unexpected EOF'],
            ['{"a": tru}', "invalid character '}' in literal true (expecting 'e')"],
            ['{"a" 1}', "invalid character '1' after object key"],
            ['{"a": 1 "b": 2}', "invalid character '\"' after object key:value pair"],
            ['{"a": [1 2]}', "invalid character '2' after array element"],
            ['{"a": 1.}', "invalid character '}' after decimal point in numeric literal"],
            ['{"a": "\\x"}', "invalid character 'x' in string escape code"],
            ['{"a": "\u0001"}', "invalid character '\\x01' in string literal"],
            ["{'a': 1}", "invalid character '\\'' looking for beginning of object key string"],
            ['é', "invalid character 'Ã' looking for beginning of value"],
            ['['.repeat(10_001), "invalid character '[' exceeded max depth"],
        ];
        for (const [text, message] of cases) {
            expect(() => decode('CreateOrgOption', text), text).to.throw(message);
        }
    });

    it("refuses a value of the wrong type in the decoder's words, naming Go's types", () => {
        const cases: Array<[string, string, string]> = [
            ['CreateOrgOption', '[]', 'json: cannot unmarshal array into Go value of type structs.CreateOrgOption'],
            [
                'CreateOrgOption',
                '{"username": 5}',
                'json: cannot unmarshal number into Go struct field CreateOrgOption.username of type string',
            ],
            [
                'CreateOrgOption',
                '{"visibility": true}',
                'json: cannot unmarshal bool into Go struct field CreateOrgOption.visibility of type structs.VisibilityString',
            ],
            [
                'EditUserOption',
                '{"source_id": 1.5}',
                'json: cannot unmarshal number 1.5 into Go struct field EditUserOption.source_id of type int64',
            ],
            [
                'EditUserOption',
                '{"max_repo_creation": "5"}',
                'json: cannot unmarshal string into Go struct field EditUserOption.max_repo_creation of type int',
            ],
            [
                'CreateIssueOption',
                '{"labels": ["a"]}',
                'json: cannot unmarshal string into Go struct field CreateIssueOption.labels of type int64',
            ],
            [
                'CreateHookOption',
                '{"config": {"url": 5}}',
                'json: cannot unmarshal number into Go struct field CreateHookOption.config of type string',
            ],
            // time.Time's own UnmarshalJSON stops the decoding, and its error wins over a type error seen before.
            ['CreateIssueOption', '{"title": 5, "due_date": 5}', 'Time.UnmarshalJSON: input is not a JSON string'],
        ];
        for (const [definition, text, message] of cases) {
            expect(() => decode(definition, text), text).to.throw(message);
        }
    });
});
