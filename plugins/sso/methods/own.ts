/** Keep the app's own login: not single sign-on. The identity provider asks first, then the app asks its own users. */
import type { SignInMethod } from '../method-types.ts';

const own: SignInMethod = {
    title: "Keep the app's own login",
    singleSignOn: false,
    needs: [],
    values: () => ({}),
};

export default own;
