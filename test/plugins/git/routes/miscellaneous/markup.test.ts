import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { createTestServer, createTestUser, type TestServer } from '../../../../helpers/server.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const ROOT = 'http://127.0.0.1:3000/';

describe('miscellaneous: markdown and markup rendering', () => {
    let context: TestServer;
    let headers: { authorization: string };

    before(async () => {
        context = await createTestServer();
        headers = (await createTestUser(context.server)).headers;
    });

    after(async () => {
        await context.cleanup();
    });

    const render = async (url: string, payload: object) => {
        const response = await context.server.inject({ method: 'POST', url, headers, payload });
        return response;
    };

    const markdown = async (payload: object) => {
        const response = await render('/api/v1/markdown', payload);
        expect(response.statusCode).to.equal(200);
        expect(response.headers['content-type']).to.equal('text/html; charset=utf-8');
        return response.payload;
    };

    it('renders GitHub-flavoured tables with alignment', async () => {
        const html = await markdown({ Text: '| a | b |\n|:--|--:|\n| 1 | 2 |\n', Mode: 'markdown' });
        expect(html).to.contain('<table>');
        expect(html).to.match(/<th[^>]*align="left"[^>]*>a<\/th>/);
        expect(html).to.match(/<td[^>]*align="right"[^>]*>2<\/td>/);
    });

    it('renders strikethrough, task lists and autolinks with rel=nofollow', async () => {
        const html = await markdown({ Text: '~~gone~~\n\n- [x] done\n- [ ] todo\n\nsee https://example.com/page now' });
        expect(html).to.contain('<del>gone</del>');
        expect(html).to.match(/<input[^>]*type="checkbox"[^>]*checked[^>]*>/);
        expect(html).to.match(/<input(?![^>]*checked)[^>]*type="checkbox"[^>]*>/);
        expect(html).to.match(/<a href="https:\/\/example\.com\/page" rel="nofollow">https:\/\/example\.com\/page<\/a>/);
    });

    it("keeps a fenced code block's language as a class", async () => {
        const html = await markdown({ Text: '```go\nfunc main() {}\n```\n' });
        expect(html).to.match(/<code[^>]*class="[^"]*language-go[^"]*"/);
        expect(html).to.contain('func main() {}');
    });

    it("gives headings Gitea's user-content- ids, numbering duplicates", async () => {
        const html = await markdown({ Text: '# Hello World\n\n## Hello World\n' });
        expect(html).to.contain('id="user-content-hello-world"');
        expect(html).to.contain('id="user-content-hello-world-1"');
    });

    it('does not treat underscores inside names as emphasis', async () => {
        const html = await markdown({ Text: 'edit __init__.py and snake_case_name' });
        expect(html).to.contain('__init__.py');
        expect(html).to.contain('snake_case_name');
    });

    it('leaves links and images as written in markdown mode, as Gitea renders raw markdown without post-processing', async () => {
        const text = '[doc](docs/readme.md) ![pic](img/a.png) [[Name|Link]] @someone';
        const expected = '<p><a href="docs/readme.md" rel="nofollow">doc</a> <img src="img/a.png" alt="pic"/> [[Name|Link]] @someone</p>\n';
        expect(await markdown({ Text: text, Mode: 'markdown', Context: '/org/repo/src/branch/main' })).to.equal(expected);
        expect(await markdown({ Text: text, Context: '/org/repo' })).to.equal(expected);
        const raw = await context.server.inject({
            method: 'POST',
            url: '/api/v1/markdown/raw',
            headers: { ...headers, 'content-type': 'text/plain' },
            payload: text,
        });
        expect(raw.payload).to.equal(expected);
    });

    it("resolves relative links and images against the file's folder in gfm and file modes, linking images to their page", async () => {
        const payload = { Text: '[next](next.md) ![pic](img/a.png)', Context: '/org/repo/src/branch/main/docs', FilePath: 'docs/guide.md' };
        for (const mode of ['gfm', 'file']) {
            const response = await render('/api/v1/markup', { ...payload, Mode: mode });
            expect(response.statusCode).to.equal(200);
            expect(response.payload).to.equal(
                `<p><a href="${ROOT}org/repo/src/branch/main/docs/next.md" rel="nofollow">next</a> ` +
                    `<a href="${ROOT}org/repo/src/branch/main/docs/img/a.png" target="_blank" rel="nofollow noopener">` +
                    `<img src="${ROOT}org/repo/media/branch/main/docs/img/a.png" alt="pic"/></a></p>\n`,
            );
        }
    });

    it("resolves links as Gitea's render helpers do: never above the base, '/' from the base, anchors to user-content ids", async () => {
        // models/renderhelper/repo_file_test.go and repo_comment_test.go (AbsoluteAndRelative), modules/markup/markdown/markdown_test.go (TestRender_Images).
        const text =
            '[/test](/test)\n[./test](./test)\n![/image](/image)\n![up](../../.images/train.jpg)\n[![in link](x.png)](https://gitea.io)\n[anchor](#intro)';
        const file = await markdown({ Text: text, Mode: 'gfm', Context: '/user2/repo1/src/branch/main' });
        const src = `${ROOT}user2/repo1/src/branch/main`;
        const media = `${ROOT}user2/repo1/media/branch/main`;
        expect(file).to.equal(
            `<p><a href="${src}/test" rel="nofollow">/test</a>\n` +
                `<a href="${src}/test" rel="nofollow">./test</a>\n` +
                `<a href="${src}/image" target="_blank" rel="nofollow noopener"><img src="${media}/image" alt="/image"/></a>\n` +
                `<a href="${src}/.images/train.jpg" target="_blank" rel="nofollow noopener"><img src="${media}/.images/train.jpg" alt="up"/></a>\n` +
                `<a href="https://gitea.io" rel="nofollow"><img src="${media}/x.png" alt="in link"/></a>\n` +
                `<a href="#user-content-intro" rel="nofollow">anchor</a></p>\n`,
        );
        const comment = await markdown({ Text: '[/test](/test)\n![./image](./image)', Mode: 'comment', Context: '/user2/repo1' });
        expect(comment).to.equal(
            `<p><a href="${ROOT}user2/repo1/test" rel="nofollow">/test</a><br/>\n` +
                `<a href="${ROOT}user2/repo1/image" target="_blank" rel="nofollow noopener"><img src="${ROOT}user2/repo1/image" alt="./image"/></a></p>\n`,
        );
    });

    it("renders Gitea's own API test cases exactly (routers/api/v1/misc/markup_test.go)", async () => {
        await createTestUser(context.server, { name: 'r-lyeh' });
        const wikiCases = [
            [
                'Wiki! Enjoy :)\n- [[Links, Language bindings, Engine bindings|Links]]\n- [[Tips]]\n- Bezier widget (by @r-lyeh) https://github.com/ocornut/imgui/issues/786',
                '<p>Wiki! Enjoy :)</p>\n<ul>\n' +
                    `<li><a href="${ROOT}user2/repo1/wiki/Links" rel="nofollow">Links, Language bindings, Engine bindings</a></li>\n` +
                    `<li><a href="${ROOT}user2/repo1/wiki/Tips" rel="nofollow">Tips</a></li>\n` +
                    `<li>Bezier widget (by <a href="${ROOT}r-lyeh" rel="nofollow">@r-lyeh</a>) <a href="https://github.com/ocornut/imgui/issues/786" rel="nofollow">https://github.com/ocornut/imgui/issues/786</a></li>\n` +
                    '</ul>\n',
            ],
            [
                '[[Guardfile-DSL / Configuring-Guard|Guardfile-DSL---Configuring-Guard]]',
                `<p><a href="${ROOT}user2/repo1/wiki/Guardfile-DSL---Configuring-Guard" rel="nofollow">Guardfile-DSL / Configuring-Guard</a></p>\n`,
            ],
            ['[[Name|Link]]', `<p><a href="${ROOT}user2/repo1/wiki/Link" rel="nofollow">Name</a></p>\n`],
            [
                '## What is Wine Staging?\n**Wine Staging** on website [wine-staging.com](http://wine-staging.com).\n\n' +
                    '## Quick Links\nHere are some links to the most important topics. You can find the full list of pages at the sidebar.\n\n' +
                    '[[Configuration]]\n[[images/icon-bug.png]]\n',
                '<h2 id="user-content-what-is-wine-staging">What is Wine Staging?</h2>\n' +
                    '<p><strong>Wine Staging</strong> on website <a href="http://wine-staging.com" rel="nofollow">wine-staging.com</a>.</p>\n' +
                    '<h2 id="user-content-quick-links">Quick Links</h2>\n' +
                    '<p>Here are some links to the most important topics. You can find the full list of pages at the sidebar.</p>\n' +
                    `<p><a href="${ROOT}user2/repo1/wiki/Configuration" rel="nofollow">Configuration</a>\n` +
                    `<a href="${ROOT}user2/repo1/wiki/images/icon-bug.png" rel="nofollow"><img src="${ROOT}user2/repo1/wiki/raw/images/icon-bug.png" title="icon-bug.png" alt="images/icon-bug.png"/></a></p>\n`,
            ],
            ['', ''],
        ];
        for (const [text = '', expected = ''] of wikiCases) {
            for (const mode of ['gfm', 'comment']) {
                expect(await markdown({ Text: text, Mode: mode, Context: '/user2/repo1', Wiki: true }), `${mode}: ${text}`).to.equal(
                    expected,
                );
            }
            const viaMarkup = await render('/api/v1/markup', {
                Text: text,
                Mode: 'file',
                FilePath: 'path/test.md',
                Context: '/user2/repo1',
                Wiki: true,
            });
            expect(viaMarkup.payload, text).to.equal(expected);
        }

        const input = '[Link](test.md)\n![Image](image.png)';
        const linked = (folder: string) =>
            `<p><a href="${ROOT}user2/repo1/src/branch/main/${folder}test.md" rel="nofollow">Link</a>\n` +
            `<a href="${ROOT}user2/repo1/src/branch/main/${folder}image.png" target="_blank" rel="nofollow noopener">` +
            `<img src="${ROOT}user2/repo1/media/branch/main/${folder}image.png" alt="Image"/></a></p>\n`;
        expect(await markdown({ Text: input, Mode: 'gfm', Context: '/user2/repo1/src/branch/main' })).to.equal(linked(''));
        const gfm = await render('/api/v1/markup', { Text: input, Mode: 'gfm', Context: '/user2/repo1/src/branch/main', FilePath: '' });
        expect(gfm.payload).to.equal(linked(''));
        const file = await render('/api/v1/markup', {
            Text: input,
            Mode: 'file',
            Context: '/user2/repo1/src/branch/main/path',
            FilePath: 'path/new-file.md',
        });
        expect(file.payload).to.equal(linked('path/'));
    });

    it('renders [[short links]] in every post-processed mode as Gitea does (modules/markup/html_test.go, TestRender_ShortLinks)', async () => {
        const tree = `${ROOT}user2/repo1/src/branch/main`;
        const media = `${ROOT}user2/repo1/media/branch/main`;
        const cases: Array<[string, string]> = [
            ['[[Link]]', `<a href="${tree}/Link" rel="nofollow">Link</a>`],
            ['[[Link.-]]', `<a href="${tree}/Link.-" rel="nofollow">Link.-</a>`],
            [
                '[[Link.jpg]]',
                `<a href="${tree}/Link.jpg" rel="nofollow"><img src="${media}/Link.jpg" title="Link.jpg" alt="Link.jpg"/></a>`,
            ],
            [
                '[[http://google.com/favicon.ico]]',
                '<a href="http://google.com/favicon.ico" rel="nofollow"><img src="http://google.com/favicon.ico" title="favicon.ico" alt="http://google.com/favicon.ico"/></a>',
            ],
            [
                '[[Name|Link.jpg|alt=AltName]]',
                `<a href="${tree}/Link.jpg" rel="nofollow"><img src="${media}/Link.jpg" title="AltName" alt="AltName"/></a>`,
            ],
            [
                '[[Name|Link Other.jpg|alt="AltName"|title=\'Title\']]',
                `<a href="${tree}/Link+Other.jpg" rel="nofollow"><img src="${media}/Link+Other.jpg" title="Title" alt="AltName"/></a>`,
            ],
            [
                '[[Link]] [[Other Link]] [[Link?]]',
                `<a href="${tree}/Link" rel="nofollow">Link</a> <a href="${tree}/Other-Link" rel="nofollow">Other Link</a> <a href="${tree}/Link%3F" rel="nofollow">Link?</a>`,
            ],
            [
                '[[Link #.jpg]]',
                `<a href="${tree}/Link+%23.jpg" rel="nofollow"><img src="${media}/Link+%23.jpg" title="Link #.jpg" alt="Link #.jpg"/></a>`,
            ],
            [
                '[[some/path/Link #.jpg]]',
                `<a href="${tree}/some/path/Link%20#.jpg" rel="nofollow"><img src="${media}/some/path/Link%20#.jpg" title="Link #.jpg" alt="some/path/Link #.jpg"/></a>`,
            ],
            [
                '[[Link]]s and [x](https://example.org) [[Link](https://example.org)',
                `<a href="${tree}/Link" rel="nofollow">Links</a> and <a href="https://example.org" rel="nofollow">x</a> [<a href="https://example.org" rel="nofollow">Link</a>`,
            ],
        ];
        for (const [text, expected] of cases) {
            expect(await markdown({ Text: text, Mode: 'gfm', Context: '/user2/repo1/src/branch/main' }), text).to.equal(
                `<p>${expected}</p>\n`,
            );
        }
        const comment = await markdown({ Text: '[[Page]] [[pic.png]]', Mode: 'comment', Context: '/user2/repo1' });
        expect(comment).to.equal(
            `<p><a href="${ROOT}user2/repo1/Page" rel="nofollow">Page</a> <a href="${ROOT}user2/repo1/pic.png" rel="nofollow"><img src="${ROOT}user2/repo1/pic.png" title="pic.png" alt="pic.png"/></a></p>\n`,
        );
    });

    it('turns [[wiki links]] into wiki page links in wiki mode, and through Wiki: true', async () => {
        const byMode = await markdown({ Text: 'See [[Home]] and [[Install guide|Install-Guide]]', Mode: 'wiki', Context: '/org/repo' });
        expect(byMode).to.contain(`href="${ROOT}org/repo/wiki/Home"`);
        expect(byMode).to.contain(`href="${ROOT}org/repo/wiki/Install-Guide"`);
        const byFlag = await markdown({ Text: 'See [[Home]]', Wiki: true, Context: '/org/repo' });
        expect(byFlag).to.contain(`href="${ROOT}org/repo/wiki/Home"`);
        const image = await markdown({ Text: '![pic](images/a.png) [[Page Two]]', Mode: 'wiki', Context: '/org/repo' });
        expect(image).to.equal(
            `<p><a href="${ROOT}org/repo/wiki/images/a.png" target="_blank" rel="nofollow noopener"><img src="${ROOT}org/repo/wiki/raw/images/a.png" alt="pic"/></a> ` +
                `<a href="${ROOT}org/repo/wiki/Page-Two" rel="nofollow">Page Two</a></p>\n`,
        );
    });

    it('breaks lines and links issue references in comment mode', async () => {
        const html = await markdown({ Text: 'line one\nline two, fixes #12', Mode: 'comment', Context: '/org/repo' });
        expect(html).to.contain('<br');
        expect(html).to.contain(`href="${ROOT}org/repo/issues/12"`);
    });

    it('links mentions of existing public users and organisations in every post-processed mode, as Gitea does', async () => {
        const alice = await createTestUser(context.server, { name: 'Mention-Alice' });
        const hidden = await createTestUser(context.server, { name: 'mention-hidden' });
        const limited = await createTestUser(context.server, { name: 'mention-limited' });
        await context.database.knex('users').where({ id: hidden.user.id }).update({ visibility: 2 });
        await context.database.knex('users').where({ id: limited.user.id }).update({ visibility: 1 });
        for (const [name, visibility] of [
            ['mention-org', 'public'],
            ['mention-private-org', 'private'],
        ]) {
            const created = await context.server.inject({
                method: 'POST',
                url: '/api/v1/orgs',
                headers: alice.headers,
                payload: { username: name, visibility },
            });
            expect(created.statusCode).to.equal(201);
        }
        const text =
            'hi @mention-alice, **@Mention-Alice** @mention-hidden @mention-limited @nobody-here @mention-org @mention-private-org.';
        const expected =
            `<p>hi <a href="${ROOT}mention-alice" rel="nofollow">@mention-alice</a>, <strong><a href="${ROOT}Mention-Alice" rel="nofollow">@Mention-Alice</a></strong> ` +
            `@mention-hidden @mention-limited @nobody-here <a href="${ROOT}mention-org" rel="nofollow">@mention-org</a> @mention-private-org.</p>\n`;
        for (const mode of ['comment', 'gfm', 'wiki']) {
            expect(await markdown({ Text: text, Mode: mode, Context: '/org/repo' }), mode).to.equal(expected);
        }
        const file = await render('/api/v1/markup', {
            Text: text,
            Mode: 'file',
            FilePath: 'docs/a.md',
            Context: '/org/repo/src/branch/main/docs',
        });
        expect(file.payload).to.equal(expected);
        expect(await markdown({ Text: text, Mode: 'markdown' })).to.equal(
            `<p>${text.replace('**@Mention-Alice**', '<strong>@Mention-Alice</strong>')}</p>\n`,
        );
    });

    it("finds mentions with Gitea's pattern: after a space or bracket, before a space, an end of sentence, a quote or a bracket", async () => {
        await createTestUser(context.server, { name: 'pat-bob' });
        await createTestUser(context.server, { name: 'pat-bob.x' });
        const link = (name: string) => `<a href="${ROOT}${name}" rel="nofollow">@${name}</a>`;
        const cases: Array<[string, string]> = [
            [
                '(@pat-bob) [@pat-bob] @pat-bob: @pat-bob!',
                `(${link('pat-bob')}) [${link('pat-bob')}] ${link('pat-bob')}: ${link('pat-bob')}!`,
            ],
            ['@pat-bob @pat-bob.x @pat-bob.x.', `${link('pat-bob')} ${link('pat-bob.x')} ${link('pat-bob.x')}.`],
            [
                'x@pat-bob @pat-bob:x @pat-bob- @pat-bob.. `@pat-bob` [@pat-bob](https://example.org)',
                'x@pat-bob @pat-bob:x @pat-bob- @pat-bob.. <code>@pat-bob</code> <a href="https://example.org" rel="nofollow">@pat-bob</a>',
            ],
        ];
        for (const [text, expected] of cases) {
            expect(await markdown({ Text: text, Mode: 'gfm' }), text).to.equal(`<p>${expected}</p>\n`);
        }
        // A quote ends a mention's name, a double quote does not.
        expect(await markdown({ Text: "@pat-bob's", Mode: 'gfm' })).to.contain(link('pat-bob'));
        expect(await markdown({ Text: '@pat-bob"', Mode: 'gfm' })).to.not.contain('<a ');
    });

    it('renders 50,000 mentions (200) with one look-up of a bounded number of names', async () => {
        await createTestUser(context.server, { name: 'mention-bob' });
        // Look-ups of users by a list of names; the token's own look-up may come from the read cache or not.
        let queries = 0;
        const count = (query: { sql: string }) => {
            queries += /lower_name.+ in \(/i.test(query.sql) ? 1 : 0;
        };
        const renderCounted = async (text: string) => {
            queries = 0;
            context.database.knex.on('query', count);
            try {
                const response = await render('/api/v1/markdown', { Text: text, Mode: 'comment' });
                expect(response.statusCode).to.equal(200);
                return { html: response.payload, queries };
            } finally {
                context.database.knex.off('query', count);
            }
        };

        const one = await renderCounted('@mention-bob');
        expect(one.html).to.contain(`href="${ROOT}mention-bob"`);
        const many = await renderCounted(Array.from({ length: 50_000 }, (_, index) => `@someone${index}`).join(' ') + ' @mention-bob');
        expect(one.queries).to.equal(1);
        expect(many.queries).to.equal(1);
        expect(many.html).to.contain('@someone49999 ');
        expect(many.html.split('<a ').length - 1).to.equal(0);
        const repeated = await renderCounted('@mention-bob '.repeat(50_000));
        expect(repeated.queries).to.equal(1);
        expect(repeated.html.split(`<a href="${ROOT}mention-bob" rel="nofollow">@mention-bob</a>`).length - 1).to.equal(50_000);
    });

    it('answers 422 in plain text for an unknown mode', async () => {
        const response = await render('/api/v1/markdown', { Text: 'x', Mode: 'bogus' });
        expect(response.statusCode).to.equal(422);
        expect(String(response.headers['content-type'])).to.startWith('text/plain');
        expect(response.payload).to.equal('unsupported render mode: bogus\n');
    });

    it('answers 422 when file mode has no renderer for the extension', async () => {
        const response = await render('/api/v1/markup', { Text: 'x', Mode: 'file', FilePath: 'image.psd' });
        expect(response.statusCode).to.equal(422);
        expect(response.payload).to.equal('unable to find a render\n');
    });

    it("keeps ROOT_URL's path in the links it resolves, which Gitea's API render drops", async () => {
        const subPath = await createTestServer({ PUBLIC_URL: 'http://127.0.0.1:3000/git/' });
        try {
            const user = await createTestUser(subPath.server, { name: 'sub-alice' });
            const response = await subPath.server.inject({
                method: 'POST',
                url: '/api/v1/markdown',
                headers: user.headers,
                payload: { Text: '[a](b) ![c](d.png) @sub-alice', Mode: 'gfm', Context: '/git/org/repo/src/branch/main' },
            });
            const base = 'http://127.0.0.1:3000/git/';
            expect(response.payload).to.equal(
                `<p><a href="${base}org/repo/src/branch/main/b" rel="nofollow">a</a> ` +
                    `<a href="${base}org/repo/src/branch/main/d.png" target="_blank" rel="nofollow noopener"><img src="${base}org/repo/media/branch/main/d.png" alt="c"/></a> ` +
                    `<a href="${base}sub-alice" rel="nofollow">@sub-alice</a></p>\n`,
            );
        } finally {
            await subPath.cleanup();
        }
    });

    it('renders an empty text as an empty body', async () => {
        const response = await render('/api/v1/markdown', { Text: '' });
        expect(response.statusCode).to.equal(200);
        expect(response.payload).to.equal('');
    });

    it('renders a raw text/plain body with the plain pipeline: no wiki links', async () => {
        const response = await context.server.inject({
            method: 'POST',
            url: '/api/v1/markdown/raw',
            headers: { ...headers, 'content-type': 'text/plain' },
            payload: '**bold** [[Name|Link]]',
        });
        expect(response.statusCode).to.equal(200);
        expect(response.headers['content-type']).to.equal('text/html; charset=utf-8');
        expect(response.payload).to.contain('<strong>bold</strong>');
        expect(response.payload).to.contain('[[Name|Link]]');
    });
});
