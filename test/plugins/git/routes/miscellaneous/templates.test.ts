import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { ROOT_DIR } from '../../../../../server.ts';
import { createTestServer, temporaryDirectory, type TestServer } from '../../../../helpers/server.ts';
import { swaggerErrors } from '../../../../helpers/swagger.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

describe('miscellaneous: templates', () => {
    let context: TestServer;

    before(async () => {
        context = await createTestServer();
    });

    after(async () => {
        await context.cleanup();
    });

    const get = async (url: string, operationId: string) => {
        const response = await context.server.inject({ method: 'GET', url });
        if (response.statusCode < 400) {
            expect(response.headers['content-type']).to.equal('application/json; charset=utf-8');
            expect(swaggerErrors(operationId, response.statusCode, JSON.parse(response.payload))).to.equal([]);
        }

        return response;
    };

    describe('ignore-file templates', () => {
        it('lists every shipped template, sorted bytewise (upper case first)', async () => {
            const response = await get('/api/v1/gitignore/templates', 'listGitignoresTemplates');
            expect(response.statusCode).to.equal(200);
            const names = response.result as string[];
            expect(names.length).to.equal(309);
            expect(names.slice(0, 3)).to.equal(['AL', 'Actionscript', 'Ada']);
            expect(names).to.include(['C++', 'Go', 'Node']);
            expect([...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))).to.equal(names);
        });

        it('gets one template with its source', async () => {
            const response = await get('/api/v1/gitignore/templates/Node', 'getGitignoreTemplateInfo');
            expect(response.statusCode).to.equal(200);
            const source = Fs.readFileSync(Path.join(ROOT_DIR, 'assets/gitignore/templates/Node'), 'utf8');
            expect(response.result).to.equal({ name: 'Node', source });
        });

        it("answers 404 in Gitea's shape for an unknown name", async () => {
            const response = await get('/api/v1/gitignore/templates/NoSuchThing', 'getGitignoreTemplateInfo');
            expect(response.statusCode).to.equal(404);
            expect(response.result).to.equal({ message: 'not found', url: 'http://127.0.0.1:3000/api/swagger' });
        });

        it('does not let a name leave the templates folder', async () => {
            const response = await get('/api/v1/gitignore/templates/..%2F..%2Fpackage.json', 'getGitignoreTemplateInfo');
            expect(response.statusCode).to.equal(404);
        });
    });

    describe('label templates', () => {
        it('lists the label sets', async () => {
            const response = await get('/api/v1/label/templates', 'listLabelTemplates');
            expect(response.statusCode).to.equal(200);
            expect(response.result).to.equal(['Advanced', 'Default']);
        });

        it('gets the Default set: seven labels, colours without #', async () => {
            const response = await get('/api/v1/label/templates/Default', 'getLabelTemplateInfo');
            expect(response.statusCode).to.equal(200);
            const labels = response.result as Array<{ name: string; color: string; description: string; exclusive: boolean }>;
            expect(labels.map((label) => label.name)).to.equal([
                'bug',
                'duplicate',
                'enhancement',
                'help wanted',
                'invalid',
                'question',
                'wontfix',
            ]);
            expect(labels[0]).to.equal({ name: 'bug', color: 'ee0701', description: 'Something is not working', exclusive: false });
        });

        it('gets the Advanced set with scoped, exclusive labels', async () => {
            const response = await get('/api/v1/label/templates/Advanced', 'getLabelTemplateInfo');
            const labels = response.result as Array<{ name: string; color: string; exclusive: boolean }>;
            expect(labels.length).to.equal(18);
            expect(labels.find((label) => label.name === 'Priority/High')).to.include({ exclusive: true, color: 'd32f2f' });
            expect(labels.find((label) => label.name === 'Status/Abandoned')?.color).to.equal('222222');
        });

        it('gets the Advanced set as Gitea ships it now (options/label/Advanced.yaml: Compat/Breaking, sort orders not in the API)', async () => {
            const response = await get('/api/v1/label/templates/Advanced', 'getLabelTemplateInfo');
            const label = (name: string, color: string, description: string, exclusive = false) => ({
                name,
                exclusive,
                color,
                description,
            });
            expect(response.result).to.equal([
                label('Kind/Bug', 'ee0701', 'Something is not working'),
                label('Kind/Feature', '0288d1', 'New functionality'),
                label('Kind/Enhancement', '84b6eb', 'Improve existing functionality'),
                label('Kind/Security', '9c27b0', 'This is security issue'),
                label('Kind/Testing', '795548', 'Issue or pull request related to testing'),
                label('Kind/Documentation', '37474f', 'Documentation changes'),
                label('Compat/Breaking', 'c62828', "Breaking change that won't be backward compatible"),
                label('Reviewed/Duplicate', '616161', 'This issue or pull request already exists', true),
                label('Reviewed/Invalid', '546e7a', 'Invalid issue', true),
                label('Reviewed/Confirmed', '795548', 'Issue has been confirmed', true),
                label("Reviewed/Won't Fix", 'eeeeee', "This issue won't be fixed", true),
                label('Status/Need More Info', '424242', 'Feedback is required to reproduce issue or to continue work', true),
                label('Status/Blocked', '880e4f', 'Something is blocking this issue or pull request', true),
                label('Status/Abandoned', '222222', 'Somebody has started to work on this but abandoned work', true),
                label('Priority/Critical', 'b71c1c', 'The priority is critical', true),
                label('Priority/High', 'd32f2f', 'The priority is high', true),
                label('Priority/Medium', 'e64a19', 'The priority is medium', true),
                label('Priority/Low', '4caf50', 'The priority is low', true),
            ]);
            expect(Object.keys((response.result as object[])[0] ?? {})).to.equal(['name', 'exclusive', 'color', 'description']);
        });

        it('is case-sensitive and answers 404 for unknown sets', async () => {
            expect((await get('/api/v1/label/templates/default', 'getLabelTemplateInfo')).statusCode).to.equal(404);
        });
    });

    describe('license templates', () => {
        it("lists the SPDX licences with Gitea's entry shape", async () => {
            const response = await get('/api/v1/licenses', 'listLicenseTemplates');
            expect(response.statusCode).to.equal(200);
            const entries = JSON.parse(response.payload) as Array<{ key: string; name: string; url: string }>;
            expect(entries.length).to.be.above(500);
            const mit = entries.find((entry) => entry.key === 'MIT');
            expect(mit).to.equal({ key: 'MIT', name: 'MIT', url: 'http://127.0.0.1:3000/api/v1/licenses/MIT' });
        });

        it('gets a licence with its full text', async () => {
            const response = await get('/api/v1/licenses/Apache-2.0', 'getLicenseTemplateInfo');
            expect(response.statusCode).to.equal(200);
            const info = response.result as { key: string; body: string; implementation: string };
            expect(info.key).to.equal('Apache-2.0');
            expect(info.body).to.contain('Apache License');
            expect(info.body).to.contain('Version 2.0');
            expect(info.implementation).to.startWith('Create a text file');
        });

        it('answers 404 for an unknown licence', async () => {
            const response = await get('/api/v1/licenses/Not-A-License', 'getLicenseTemplateInfo');
            expect(response.statusCode).to.equal(404);
            expect((response.result as { message: string }).message).to.equal('not found');
        });
    });
});

describe("miscellaneous: an administrator's own templates", () => {
    it('adds a label set and an ignore-file template dropped into DATA_DIR/custom/options', async () => {
        const dataDir = temporaryDirectory();
        const customDir = Path.join(dataDir, 'custom', 'options');
        Fs.mkdirSync(Path.join(customDir, 'label'), { recursive: true });
        Fs.mkdirSync(Path.join(customDir, 'gitignore'), { recursive: true });
        Fs.writeFileSync(Path.join(customDir, 'label', 'Team.yaml'), 'labels:\n  - name: ops\n    color: "#ABC"\n    exclusive: true\n');
        Fs.writeFileSync(Path.join(customDir, 'gitignore', 'Gatehouse'), 'data/\n');
        const custom = await createTestServer({ DATA_DIR: dataDir });
        try {
            const sets = await custom.server.inject('/api/v1/label/templates');
            expect(sets.result).to.equal(['Advanced', 'Default', 'Team']);
            const team = await custom.server.inject('/api/v1/label/templates/Team');
            expect(team.result).to.equal([{ name: 'ops', color: 'aabbcc', description: '', exclusive: true }]);
            const ignore = await custom.server.inject('/api/v1/gitignore/templates/Gatehouse');
            expect(ignore.result).to.equal({ name: 'Gatehouse', source: 'data/\n' });
        } finally {
            await custom.cleanup();
            Fs.rmSync(dataDir, { recursive: true, force: true });
        }
    });
});
