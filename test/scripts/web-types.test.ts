import Fs from 'node:fs';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { WEB_TYPES_FILE, webTypes } from '../../scripts/web-types.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('the web UI’s API types', () => {
    it('are the ones generated from the deploy specs now (npm run web:types writes them)', async () => {
        const written = Fs.readFileSync(WEB_TYPES_FILE, 'utf8');
        const wanted = await webTypes();
        expect(written === wanted, 'web/src/api-types.ts is not current: run npm run web:types').to.be.true();
        // The types the app page reads are these: nothing hand-copied beside them.
        const pageTypes = Fs.readFileSync(new URL('../../web/src/pages/app/types.ts', import.meta.url), 'utf8');
        expect(pageTypes).to.not.contain('interface ');
        expect(wanted).to.contain('App: {');
    });
});
