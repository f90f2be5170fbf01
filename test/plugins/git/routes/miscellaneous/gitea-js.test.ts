import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { type giteaApi } from 'gitea-js';

import { createTestServer, createTestUser, type TestServer } from '../../../../helpers/server.ts';
import { swaggerErrors } from '../../../../helpers/swagger.ts';
import { giteaClient } from '../../../../helpers/git-client.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

describe('miscellaneous: the gitea-js client against a running server', () => {
    let context: TestServer;
    let api: ReturnType<typeof giteaApi>;

    before(async () => {
        context = await createTestServer();
        await context.server.start();
        const { token } = await createTestUser(context.server);
        api = giteaClient(context.server, token);
    });

    after(async () => {
        await context.cleanup();
    });

    it('lists and gets ignore-file templates', async () => {
        const list = await api.gitignore.listGitignoresTemplates();
        expect(list.status).to.equal(200);
        expect(swaggerErrors('listGitignoresTemplates', 200, list.data)).to.equal([]);
        const node = await api.gitignore.getGitignoreTemplateInfo('Node');
        expect(node.data.name).to.equal('Node');
        expect(node.data.source).to.contain('node_modules');
    });

    it('lists and gets label templates', async () => {
        const list = await api.label.listLabelTemplates();
        expect(list.data).to.equal(['Advanced', 'Default']);
        const labels = await api.label.getLabelTemplateInfo('Default');
        expect(swaggerErrors('getLabelTemplateInfo', 200, labels.data)).to.equal([]);
        expect(labels.data[0]?.color).to.equal('ee0701');
    });

    it('lists and gets licences', async () => {
        const list = await api.licenses.listLicenseTemplates();
        expect(swaggerErrors('listLicenseTemplates', 200, list.data)).to.equal([]);
        expect(list.data.some((entry) => entry.key === 'GPL-3.0-only')).to.be.true();
        const mit = await api.licenses.getLicenseTemplateInfo('MIT');
        expect(swaggerErrors('getLicenseTemplateInfo', 200, mit.data)).to.equal([]);
        expect(mit.data.body).to.contain('Permission is hereby granted');
    });

    it("gets a rejected promise carrying Gitea's error body for an unknown licence", async () => {
        const failure = await api.licenses.getLicenseTemplateInfo('Nope').catch((error: unknown) => error);
        expect((failure as Response).status).to.equal(404);
        expect((failure as { error: { message: string } }).error.message).to.equal('not found');
    });

    it('renders markdown, raw markdown and markup', async () => {
        const markdown = await api.markdown.renderMarkdown({ Text: '# Hi', Mode: 'gfm' }, { format: 'text' });
        expect(markdown.data).to.contain('<h1 id="user-content-hi"');
        const raw = await api.markdown.renderMarkdownRaw('*raw*' as never, { format: 'text' });
        expect(raw.data).to.contain('<em>raw</em>');
        const markup = await api.markup.renderMarkup({ Text: '**file**', Mode: 'file', FilePath: 'README.md' }, { format: 'text' });
        expect(markup.data).to.contain('<strong>file</strong>');
    });
});
