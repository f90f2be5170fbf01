import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { htmlProblems } from '../../../../fixtures/html-safety.ts';
import { xssVectors } from '../../../../fixtures/xss-vectors.ts';
import { createTestServer, createTestUser, type TestServer } from '../../../../helpers/server.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

describe('miscellaneous: nothing executable survives rendering', () => {
    let context: TestServer;
    let headers: { authorization: string };

    before(async () => {
        context = await createTestServer();
        headers = (await createTestUser(context.server)).headers;
    });

    after(async () => {
        await context.cleanup();
    });

    it('has at least 50 distinct vectors to try', () => {
        expect(new Set(xssVectors).size).to.be.at.least(50);
    });

    it('has a judge that does catch executable HTML', () => {
        for (const bad of [
            '<script>alert(1)</script>',
            '<img src="x" onerror="alert(1)">',
            '<a href="java\tscript:alert(1)">x</a>',
            '<a href="data:text/html,x">x</a>',
            '<p class="evil">x</p>',
            '<p style="background:url(x)">x</p>',
            '<iframe srcdoc="x"></iframe>',
            '<!-- x -->',
        ]) {
            expect(htmlProblems(bad), bad).to.not.be.empty();
        }

        expect(
            htmlProblems('<p><a href="https://example.com" rel="nofollow">ok</a> <span style="color: red">red</span></p>'),
        ).to.be.empty();
    });

    for (const [endpoint, modes] of [
        ['/api/v1/markdown', ['markdown', 'gfm', 'comment', 'wiki']],
        ['/api/v1/markup', ['markdown', 'file', 'comment', 'wiki']],
        ['/api/v1/markdown/raw', ['raw']],
    ] as const) {
        it(`sanitises every vector through ${endpoint}`, async () => {
            for (const vector of xssVectors) {
                for (const mode of modes) {
                    const response =
                        mode === 'raw'
                            ? await context.server.inject({
                                  method: 'POST',
                                  url: endpoint,
                                  headers: { ...headers, 'content-type': 'text/plain' },
                                  payload: vector,
                              })
                            : await context.server.inject({
                                  method: 'POST',
                                  url: endpoint,
                                  headers,
                                  payload: { Text: vector, Mode: mode, Context: '/org/repo/src/branch/main', FilePath: 'README.md' },
                              });
                    expect(response.statusCode, `${mode}: ${vector}`).to.equal(200);
                    expect(htmlProblems(response.payload), `${mode}: ${vector} gave ${response.payload}`).to.be.empty();
                }
            }
        });
    }

    it('lets nothing executable through [[short links]], their image arguments or link resolution', async () => {
        const vectors = [
            '[[javascript:alert(1)]]',
            '[[Name|javascript:alert(1)]]',
            '[[javascript:alert(1)|Name]]',
            '[[JaVaScRiPt:alert(1)]]',
            '[[&#106;avascript:alert(1)]]',
            '[[javascript:alert(1)//x.png]]',
            '[[vbscript:msgbox(1).png]]',
            '[[data:text/html,<script>alert(1)</script>]]',
            '[[data:image/svg+xml,<svg onload=alert(1)>.svg]]',
            '[[x.png|alt="><script>alert(1)</script>"]]',
            `[[x.png|title='" ><script>alert(1)</script>'|alt="' /><script>alert(2)</script>"]]`,
            '[[x.png|src=javascript:alert(1)|onerror=alert(1)]]',
            '[[<img src=x onerror=alert(1)>]]',
            '[x](/%0ajavascript:alert(1)) [y](\\\\evil.com) [z](//evil.com/%0a) ![i](java%0ascript:alert(1))',
            '@<script>alert(1)</script> @x<img/src=x/onerror=alert(1)>',
        ];
        for (const vector of vectors) {
            for (const mode of ['gfm', 'comment', 'wiki', 'file']) {
                const response = await context.server.inject({
                    method: 'POST',
                    url: '/api/v1/markup',
                    headers,
                    payload: { Text: vector, Mode: mode, Context: '/org/repo/src/branch/main', FilePath: 'README.md' },
                });
                expect(response.statusCode, `${mode}: ${vector}`).to.equal(200);
                expect(htmlProblems(response.payload), `${mode}: ${vector} gave ${response.payload}`).to.be.empty();
            }
        }
    });

    it('keeps harmless markup that looks close to a vector', async () => {
        const response = await context.server.inject({
            method: 'POST',
            url: '/api/v1/markdown',
            headers,
            payload: { Text: '<span style="color: red">red</span> ![x](data:image/png;base64,iVBORw0KGgo=) <b class="evil">b</b>' },
        });
        expect(response.payload).to.contain('style="color: red"');
        expect(response.payload).to.contain('src="data:image/png;base64,iVBORw0KGgo="');
        expect(response.payload).to.not.contain('evil');
    });
});
