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

    it('makes relative links absolute in markdown mode, ignoring the context', async () => {
        const html = await markdown({ Text: '[doc](docs/readme.md)', Mode: 'markdown', Context: '/org/repo/src/branch/main' });
        expect(html).to.contain(`href="${ROOT}docs/readme.md"`);
    });

    it("resolves relative links and images against the file's folder in gfm and file modes", async () => {
        const payload = { Text: '[next](next.md) ![pic](img/a.png)', Context: '/org/repo/src/branch/main', FilePath: 'docs/guide.md' };
        for (const mode of ['gfm', 'file']) {
            const response = await render('/api/v1/markup', { ...payload, Mode: mode });
            expect(response.statusCode).to.equal(200);
            expect(response.payload).to.contain(`href="${ROOT}org/repo/src/branch/main/docs/next.md"`);
            expect(response.payload).to.contain(`src="${ROOT}org/repo/media/branch/main/docs/img/a.png"`);
        }
    });

    it('turns [[wiki links]] into wiki page links in wiki mode, and through Wiki: true', async () => {
        const byMode = await markdown({ Text: 'See [[Home]] and [[Install guide|Install-Guide]]', Mode: 'wiki', Context: '/org/repo' });
        expect(byMode).to.contain(`href="${ROOT}org/repo/wiki/Home"`);
        expect(byMode).to.contain(`href="${ROOT}org/repo/wiki/Install-Guide"`);
        const byFlag = await markdown({ Text: 'See [[Home]]', Wiki: true, Context: '/org/repo' });
        expect(byFlag).to.contain(`href="${ROOT}org/repo/wiki/Home"`);
    });

    it('breaks lines and links issue references in comment mode', async () => {
        const html = await markdown({ Text: 'line one\nline two, fixes #12', Mode: 'comment', Context: '/org/repo' });
        expect(html).to.contain('<br');
        expect(html).to.contain(`href="${ROOT}org/repo/issues/12"`);
    });

    it('links mentions of existing public users only in comment mode, as Gitea does', async () => {
        await createTestUser(context.server, { name: 'Mention-Alice' });
        const hidden = await createTestUser(context.server, { name: 'mention-hidden' });
        await context.database.knex('users').where({ id: hidden.user.id }).update({ visibility: 2 });
        const html = await markdown({ Text: 'hi @mention-alice, **@Mention-Alice** @mention-hidden @nobody-here', Mode: 'comment' });
        expect(html).to.contain(`<a href="${ROOT}mention-alice" class="mention" rel="nofollow">@mention-alice</a>`);
        expect(html).to.contain(`<strong><a href="${ROOT}Mention-Alice" class="mention" rel="nofollow">@Mention-Alice</a></strong>`);
        expect(html).to.contain(' @mention-hidden @nobody-here');
        expect(html).to.not.contain('mention-hidden"');
        expect(html).to.not.contain('nobody-here"');
        const plain = await markdown({ Text: 'hi @mention-alice', Mode: 'markdown' });
        expect(plain).to.not.contain('class="mention"');
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
        expect(many.html).to.not.contain('class="mention"');
        const repeated = await renderCounted('@mention-bob '.repeat(50_000));
        expect(repeated.html.split('class="mention"').length - 1).to.equal(50_000);
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
