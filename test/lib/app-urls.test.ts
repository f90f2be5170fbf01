import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { isAppPath, OffOriginError, onOrigin, pathOnOrigin } from '../../lib/app-urls.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('app-supplied URLs', () => {
    it('takes a path on the app as one, with its query', () => {
        for (const path of ['/', '/login', '/doku.php?do=login', '/dokuwiki/doku.php?do=login&next=//x', '/a.b/c..d/.e', '/%2F']) {
            expect(isAppPath(path), path).to.be.true();
        }
    });

    it('refuses what a URL parser reads as another host, a scheme or another path', () => {
        const hostile = [
            '/.//127.0.0.1:9/x',
            '/%2e//127.0.0.1:9/x',
            '/a/..//evil.example/x',
            '/a/%2E%2E//evil.example/x',
            '//evil.example/x',
            '/\\evil.example/x',
            '/\t/evil.example/x',
            '/ x',
            'https://evil.example/x',
            'login',
            '/a/../b',
            '/a/.',
            '',
        ];
        for (const path of hostile) {
            expect(isAppPath(path), path).to.be.false();
        }
    });

    it('resolves text against a base and refuses anything off the origin, checked after resolution', () => {
        const origin = 'https://wiki.apps.test:8443';
        expect(onOrigin('/.//wiki.apps.test:8443/x', origin).href).to.equal('https://wiki.apps.test:8443//wiki.apps.test:8443/x');
        expect(onOrigin('next', `${origin}/a/b`).pathname).to.equal('/a/next');
        for (const text of [
            '//evil.example/x',
            'http://wiki.apps.test:8443/',
            'https://wiki.apps.test/',
            'https://wiki.apps.test:8443@evil.example/',
            'https://user@wiki.apps.test:8443/',
            'javascript:alert(1)',
            'http://[',
        ]) {
            expect(() => onOrigin(text, origin), text).to.throw(OffOriginError);
        }
    });

    it("answers a visitor's path only when it leads back to the origin on its own", () => {
        const origin = 'https://wiki.apps.test:8443';
        expect(pathOnOrigin(new URL('/home?x=1', origin), origin)).to.equal('/home?x=1');
        expect(pathOnOrigin(new URL('/.//evil.example/phish', origin), origin)).to.be.undefined();
        expect(pathOnOrigin(new URL('https://evil.example/phish'), origin)).to.be.undefined();
    });
});
