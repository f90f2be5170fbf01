import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { recipes } from '../../../../../plugins/deploy/domain/recipes/recipe-service.ts';
import { createTestServer, type TestServer } from '../../../../helpers/server.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const FIELDS = { title: 'Ledger', method: 'none' as const, level: 'documented' as const, sources: ['https://example.org/ledger'] };

describe('saved recipes on two servers of one database', () => {
    let first: TestServer;
    let second: TestServer;

    before(async () => {
        first = await createTestServer();
        second = await createTestServer({}, { dataDir: first.dataDir, database: first.database });
    });

    after(async () => {
        await second?.server.stop();
        await first?.cleanup();
    });

    it('a recipe saved through one server applies on the other at once, with what the other had worked out dropped', async () => {
        // The second server reads the saved recipes (none for this image) and remembers the answer.
        expect(await recipes(second.server).forImage('example/ledger')).to.equal(null);
        const before = await recipes(second.server).version();
        expect(await recipes(second.server).version()).to.shallow.equal(before);

        const saved = await recipes(first.server).save({
            image: 'example/ledger',
            app: 'ledger',
            savedBy: 'someone@example.com',
            fields: { image: 'example/ledger', ...FIELDS },
        });

        expect(await recipes(second.server).version()).to.not.shallow.equal(before);
        const match = await recipes(second.server).forImage('example/ledger');
        expect(match?.recipe.id).to.equal(saved.id);
        expect((await recipes(second.server).saved()).map((recipe) => recipe.id)).to.equal([saved.id]);
    });
});
