/// Reads `.stringsdict` files: property lists whose entries vary by plural category
/// (`NSStringPluralRuleType`), device (`NSStringDeviceSpecificRuleType`) or width
/// (`NSStringVariableWidthRuleType`).
///
/// ```xml
/// <key>%d new messages</key>
/// <dict>
///     <key>NSStringLocalizedFormatKey</key> <string>%#@messages@</string>
///     <key>messages</key>
///     <dict>
///         <key>NSStringFormatSpecTypeKey</key>  <string>NSStringPluralRuleType</string>
///         <key>NSStringFormatValueTypeKey</key> <string>d</string>
///         <key>one</key>   <string>%d new message</string>
///         <key>other</key> <string>%d new messages</string>
///     </dict>
/// </dict>
/// ```
enum StringsDictionaryFile {
    static let formatKey = "NSStringLocalizedFormatKey"
    static let specTypeKey = "NSStringFormatSpecTypeKey"
    static let valueTypeKey = "NSStringFormatValueTypeKey"
    static let pluralRule = "NSStringPluralRuleType"
    static let deviceRule = "NSStringDeviceSpecificRuleType"
    static let widthRule = "NSStringVariableWidthRuleType"

    /// The entries of a `.stringsdict` property list, skipping (and reporting) malformed ones.
    static func entries(from value: PropertyListValue, path: String) -> (entries: [String: LocalizedValue], diagnostics: [LocalizationDiagnostic]) {
        var entries: [String: LocalizedValue] = [:]
        var diagnostics: [LocalizationDiagnostic] = []
        guard case .dictionary(let root) = value else {
            diagnostics.append(LocalizationDiagnostic(.error, "a .stringsdict file must hold a dictionary, not \(value.kindDescription); it provides no strings", path: path))
            return (entries, diagnostics)
        }
        for (key, entryValue) in root {
            guard case .dictionary(let entry) = entryValue else {
                diagnostics.append(LocalizationDiagnostic(.warning, "the entry \"\(key)\" is \(entryValue.kindDescription), not a dictionary; it is ignored", path: path))
                continue
            }
            if let value = entry[deviceRule] ?? entry[widthRule] {
                // A whole entry that varies by device or width, without a format key.
                let rule = entry[deviceRule] != nil ? deviceRule : widthRule
                if let parsed = variableForms(rule: rule, forms: value, key: key, path: path, diagnostics: &diagnostics) {
                    entries[key] = parsed
                }
                continue
            }
            guard case .string(let format)? = entry[formatKey] else {
                diagnostics.append(LocalizationDiagnostic(.warning, "the entry \"\(key)\" has no \(formatKey) string; it is ignored", path: path))
                continue
            }
            var variables: [String: LocalizedValue] = [:]
            for (name, variableValue) in entry where name != formatKey {
                guard case .dictionary(let variable) = variableValue else {
                    diagnostics.append(LocalizationDiagnostic(.warning, "the variable '\(name)' of \"\(key)\" is \(variableValue.kindDescription), not a dictionary; it is ignored", path: path))
                    continue
                }
                guard case .string(let specType)? = variable[specTypeKey] else {
                    diagnostics.append(LocalizationDiagnostic(.warning, "the variable '\(name)' of \"\(key)\" has no \(specTypeKey); it is ignored", path: path))
                    continue
                }
                if specType == pluralRule {
                    var forms: [PluralCategory: LocalizedValue] = [:]
                    for category in PluralCategory.allCases {
                        if case .string(let form)? = variable[category.rawValue] { forms[category] = .text(form) }
                    }
                    if forms[.other] == nil {
                        diagnostics.append(LocalizationDiagnostic(.warning, "the plural variable '\(name)' of \"\(key)\" has no 'other' form, which every language needs", path: path))
                    }
                    variables[name] = .plural(.init(valueType: variable[valueTypeKey]?.stringValue, forms: forms))
                } else if specType == deviceRule || specType == widthRule {
                    var forms = PropertyListDictionary()
                    for (formKey, formValue) in variable where formKey != specTypeKey && formKey != valueTypeKey {
                        forms.set(formValue, forKey: formKey)
                    }
                    if let parsed = variableForms(rule: specType, forms: .dictionary(forms), key: key, path: path, diagnostics: &diagnostics) {
                        variables[name] = parsed
                    }
                } else {
                    diagnostics.append(LocalizationDiagnostic(.warning, "the variable '\(name)' of \"\(key)\" has unknown rule type \(specType); it is ignored", path: path))
                }
            }
            entries[key] = .substitution(format: .text(format), variables: variables)
        }
        return (entries, diagnostics)
    }

    private static func variableForms(
        rule: String, forms: PropertyListValue, key: String, path: String, diagnostics: inout [LocalizationDiagnostic]
    ) -> LocalizedValue? {
        guard case .dictionary(let dictionary) = forms else {
            diagnostics.append(LocalizationDiagnostic(.warning, "the \(rule) forms of \"\(key)\" are not a dictionary; ignored", path: path))
            return nil
        }
        if rule == deviceRule {
            var result: [String: LocalizedValue] = [:]
            for (device, value) in dictionary {
                if case .string(let text) = value { result[device] = .text(text) }
            }
            return .device(result)
        }
        var result: [Int: LocalizedValue] = [:]
        for (width, value) in dictionary {
            if let number = Int(width), case .string(let text) = value { result[number] = .text(text) }
        }
        return .width(result)
    }
}
