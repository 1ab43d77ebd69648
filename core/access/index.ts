// Effective access: who holds which role where, and through which RoleBinding (beyond HNC).
export * from './access.js';
