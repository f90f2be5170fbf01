import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { automaticTarget, newerTags, parseVersionTag } from '../../../../../plugins/deploy/domain/updates/version-tags.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('deploy manager: version tags and their lines', () => {
    it('reads versions, with a v and a suffix, and nothing else', () => {
        expect(parseVersionTag('1.25')).to.equal({ prefix: '', numbers: [1, 25], suffix: '' });
        expect(parseVersionTag('v2.4.1')).to.equal({ prefix: 'v', numbers: [2, 4, 1], suffix: '' });
        expect(parseVersionTag('16.2-alpine')).to.equal({ prefix: '', numbers: [16, 2], suffix: '-alpine' });
        for (const moving of ['latest', 'stable', 'bookworm', '1.2.3.4', 'v', '1..2', '-1', '1.2-']) {
            expect(parseVersionTag(moving), moving).to.be.undefined();
        }
    });

    it('lists newer tags of the same line only, newest first, numbers compared as numbers', () => {
        const tags = ['1.9.0', '1.10.0', '1.9.1', '1.8.9', '2.0.0', '1.10', '1.10.0-alpine', 'v1.11.0', 'latest', '1.9.0'];
        expect(newerTags('1.9.0', tags)).to.equal([
            { tag: '1.10.0', change: 'minor' },
            { tag: '1.9.1', change: 'patch' },
        ]);
        expect(newerTags('1.9.0', tags, { otherMajors: true })[0]).to.equal({ tag: '2.0.0', change: 'major' });
        expect(newerTags('16.2-alpine', ['16.3-alpine', '16.3', '17.0-alpine', '16.1-alpine'])).to.equal([
            { tag: '16.3-alpine', change: 'minor' },
        ]);
        expect(newerTags('latest', tags)).to.equal([]);
        expect(newerTags('2.0.0', tags)).to.equal([]);
    });

    it('takes the newest update within what the app asked for automatic updates', () => {
        const found = [
            { tag: '2.1.0', change: 'major' },
            { tag: '1.3.0', change: 'minor' },
            { tag: '1.2.5', change: 'patch' },
        ];
        expect(automaticTarget(found, 'off')).to.be.undefined();
        expect(automaticTarget(found, 'patch')).to.equal({ tag: '1.2.5', change: 'patch' });
        expect(automaticTarget(found, 'minor')).to.equal({ tag: '1.3.0', change: 'minor' });
        expect(automaticTarget([{ tag: 'stable', change: 'digest' }], 'patch')).to.equal({ tag: 'stable', change: 'digest' });
        expect(automaticTarget([{ tag: '2.0.0', change: 'major' }], 'minor')).to.be.undefined();
    });
});
