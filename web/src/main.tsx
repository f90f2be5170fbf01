import { render } from 'preact';

import './styles.css';
import { App } from './routes.tsx';

const root = document.getElementById('app');
if (root) {
    render(<App />, root);
}
