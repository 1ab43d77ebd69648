// Previews of hierarchy changes (`kubectl hns set/create/delete --dry-run`): pure, from the objects as they are.
export * from './model.js';
export * from './preview.js';
