// npm run build, second step: bundles every Lambda handler into dist/assets/handlers/, so the
// published construct deploys them as they are (no esbuild, no Docker at a team's synth).
import * as esbuild from 'esbuild';
import { buildPrebuiltHandlers } from '../lib/handler-assets.js';
import { resolveProjectPath } from '../lib/project-path.js';

const directory = resolveProjectPath('dist/assets/handlers');
const manifest = buildPrebuiltHandlers(esbuild, directory);
const withTeamTools = Object.entries(manifest.handlers).filter(([, handler]) => handler.importsTeamTools);
console.log(
  `Built ${Object.keys(manifest.handlers).length} handlers for ${manifest.runtime} into dist/assets/handlers/ (${withTeamTools.length} load team tools: ${withTeamTools.map(([name]) => name).join(', ')}).`,
);
