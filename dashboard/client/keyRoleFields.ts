/**
 * Progressive enhancement of Settings > API keys' create form: only the key variables the chosen
 * role needs are shown (each variable's field lists them in `data-key-roles`), so an admin key
 * asks for no `person_id`. Without JavaScript every variable is shown, its hint naming the roles
 * that need it, and the server reads only the chosen role's.
 */
const roleSelect = document.getElementById('key-role');
if (roleSelect instanceof HTMLSelectElement) {
  const variableFields = [...document.querySelectorAll<HTMLElement>('[data-key-roles]')];
  const showChosenRolesVariables = (): void => {
    for (const field of variableFields) field.hidden = !(field.dataset.keyRoles ?? '').split(' ').includes(roleSelect.value);
  };
  roleSelect.addEventListener('change', showChosenRolesVariables);
  showChosenRolesVariables();
}
